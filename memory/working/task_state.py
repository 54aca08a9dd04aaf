"""Task state: the JSON the agent keeps about the task in hand.

`{goal, current_step, constraints, attempts, last_error, next_action}` plus the counters the
hard brakes read (steps, retries per action, tokens used). Plain data in graph state; every
function returns a new dict and never mutates its argument.
"""

from __future__ import annotations

import logging
import re

from typing_extensions import TypedDict

from memory.working.context_rules import CONSTRAINT_RE, normalise_key, split_sentences
from memory.working.tokens import truncate_to_tokens
from memory.working.turn_kind import TurnKind, classify_turn, is_question

log = logging.getLogger(__name__)

# 30 constraints is far more than any real task states; the cap only stops a runaway paste.
MAX_CONSTRAINTS = 30
# Goals, steps and errors are one-liners in the prompt: ~60 tokens (~45 words) each.
MAX_FIELD_TOKENS = 60
NEW_TASK_RE = re.compile(
    r"\b(new task|another task|next task|different task|start over|new project)\b"
    r"|新任务|换个任务|下一个任务|重新开始|另一个任务",
    re.IGNORECASE,
)

_NEW_TASK_PREFIX = re.compile(r"^\s*(?:new task|新任务)\s*[:：,，-]?\s*", re.IGNORECASE)


class TaskState(TypedDict):
    """The current task (plain data: lives in graph state)."""

    goal: str | None
    current_step: str | None
    constraints: list[str]  # hold for the whole task
    attempts: int
    last_error: str | None
    next_action: str | None
    steps: int  # agent steps (model or tool calls) spent on this task
    retries: dict[str, int]  # consecutive failures per action key
    tokens_used: int
    turns: int  # user turns in this task


def new_task_state(goal: str | None = None, constraints: list[str] | None = None) -> TaskState:
    """A fresh task with zeroed counters."""
    return TaskState(
        goal=goal,
        current_step=None,
        constraints=list(constraints or []),
        attempts=0,
        last_error=None,
        next_action=None,
        steps=0,
        retries={},
        tokens_used=0,
        turns=0,
    )


def _short(text: str) -> str:
    return truncate_to_tokens(" ".join(text.split()), MAX_FIELD_TOKENS)


def _clauses(text: str) -> list[str]:
    """Sentences, with Chinese sentences further split at "，" (clauses chain with it)."""
    text = _NEW_TASK_PREFIX.sub("", text, count=1)
    return [c.strip() for s in split_sentences(text) for c in s.split("，") if c.strip()]


def extract_constraints(text: str) -> list[str]:
    """Sentences of a user turn that state a rule (must / never / always / 不要 / 必须 ...)."""
    return [_short(s) for s in _clauses(text) if CONSTRAINT_RE.search(s) and not is_question(s)]


def _goal_of(text: str) -> str:
    """The goal of an instruction: its non-constraint sentences, or its first sentence."""
    sentences = _clauses(text)
    plain = [s for s in sentences if not CONSTRAINT_RE.search(s)]
    return _short(" ".join(plain or sentences[:1])) or _short(text)


def add_constraints(existing: list[str], new: list[str]) -> list[str]:
    """`existing` + the new constraints not already there (case/punctuation-insensitive)."""
    seen = {normalise_key(c) for c in existing}
    out = list(existing)
    for c in new:
        key = normalise_key(c)
        if key and key not in seen:
            seen.add(key)
            out.append(c)
    if len(out) > MAX_CONSTRAINTS:
        log.warning("task has %d constraints; keeping the newest %d", len(out), MAX_CONSTRAINTS)
        out = out[-MAX_CONSTRAINTS:]
    return out


def update_task_from_turn(
    state: TaskState | None, text: str, kind: TurnKind | None = None
) -> TaskState:
    """Perceive: fold a user turn into the task state.

    An instruction sets the goal when there is none, or starts a new task when it says so
    ("new task", "新任务"): counters reset and earlier constraints are dropped. A later
    instruction becomes the current step. Constraint sentences in any turn are added and stay
    for the rest of the task.
    """
    kind = kind or classify_turn(text)
    ts: TaskState = new_task_state() if state is None else _copy(state)
    if kind == "instruction" and (ts["goal"] is None or NEW_TASK_RE.search(text)):
        keep = ts["constraints"] if ts["goal"] is None else []
        ts = new_task_state(goal=_goal_of(text), constraints=keep)
    elif kind == "instruction":
        ts["current_step"] = _goal_of(text)
    ts["constraints"] = add_constraints(ts["constraints"], extract_constraints(text))
    ts["turns"] += 1
    return ts


def _copy(state: TaskState) -> TaskState:
    ts = state.copy()
    ts["constraints"] = list(state["constraints"])
    ts["retries"] = dict(state["retries"])
    return ts


def record_step(state: TaskState, *, tokens: int = 0) -> TaskState:
    """Count one agent step (a model or tool call) and the tokens it used."""
    ts = _copy(state)
    ts["steps"] += 1
    ts["tokens_used"] += max(tokens, 0)
    return ts


def record_outcome(
    state: TaskState,
    *,
    action: str,
    ok: bool,
    error: str | None = None,
    next_action: str | None = None,
    step: str | None = None,
) -> TaskState:
    """Gate-and-store: record an attempt of `action` and what happens next.

    A failure sets `last_error` and counts a consecutive retry for `action`; a success resets
    that action's retry count (`last_error` stays as history until the next failure).
    """
    ts = _copy(state)
    ts["attempts"] += 1
    if ok:
        ts["retries"].pop(action, None)
    else:
        ts["retries"][action] = ts["retries"].get(action, 0) + 1
        ts["last_error"] = _short(error or f"{action} failed")
    if next_action is not None:
        ts["next_action"] = _short(next_action)
    if step is not None:
        ts["current_step"] = _short(step)
    return ts


def task_state_lines(state: TaskState) -> list[str]:
    """The task state as prompt lines, most important first (goal, constraints, ...)."""
    lines = [f"Goal: {state['goal']}"] if state["goal"] else []
    lines += [f"Constraint (holds for the whole task): {c}" for c in state["constraints"]]
    if state["current_step"]:
        lines.append(f"Current step: {state['current_step']}")
    if state["next_action"]:
        lines.append(f"Next action: {state['next_action']}")
    if state["last_error"]:
        lines.append(f"Last error: {state['last_error']}")
    if state["attempts"]:
        lines.append(f"Attempts so far: {state['attempts']}")
    return lines
