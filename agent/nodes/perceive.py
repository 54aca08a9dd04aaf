"""perceive: sensory memory, turn classification, task state, and the hard brakes."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from agent.context import Context
from agent.identity import resolve_scope
from agent.images import perceive_images, turn_text, with_text, without_images
from agent.nodes.query import latest_human, recall_query
from agent.resources import get_store
from agent.split_secrets import remove_parts, split_parts, without_parts
from agent.state import State
from memory.multimodal import ImageInputError
from memory.offload import run_cpu
from memory.settings import Settings
from memory.storage.tombstones import current_epoch
from memory.system import recaller
from memory.types import Scope, ScopeError
from memory.working.brakes import BrakeLimits, BrakeTrip, check_brakes
from memory.working.sensory import (
    InputError,
    SensoryFeatures,
    extract_features,
    normalise_input,
)
from memory.working.task_state import (
    TaskState,
    new_task_state,
    record_step,
    update_task_from_turn,
)
from memory.working.turn_kind import TurnKind, classify_turn

log = logging.getLogger(__name__)


def _sense(
    raw: str | bytes, max_chars: int, task: TaskState | None
) -> tuple[str, TurnKind, SensoryFeatures, TaskState]:
    """Clean, classify, measure and update the task state: perceive's CPU-bound part.

    Run in a thread, or in a process for a large input. Every pattern here is linear in the
    input, but a 64,000-character message still costs tens of milliseconds (task-state
    extraction alone ~70 ms): off the event loop, other users' requests are served meanwhile.
    One hop for both: each hop to a worker thread waits its turn in the pool (0.5-2.5 ms on a
    loaded machine).
    """
    text = normalise_input(raw, max_chars, on_overflow="truncate")
    kind = classify_turn(text)
    return text, kind, extract_features(text), update_task_from_turn(task, text, kind)


def _limits(ctx: Context) -> BrakeLimits:
    return BrakeLimits(
        max_steps_per_task=ctx.max_steps_per_task,
        max_retries_per_action=ctx.max_retries_per_action,
        token_budget_per_task=ctx.token_budget_per_task,
    )


def _brake(state: State, ctx: Context, trip: BrakeTrip) -> dict[str, Any]:
    """A brake tripped: ask a human (interrupt) or degrade to a plain answer."""
    if ctx.on_brake == "degrade":
        return {"brake": trip}
    answer = interrupt({"type": "brake", **trip, "options": ["continue", "stop"]})
    choice = answer.get("action") if isinstance(answer, dict) else answer
    task = state["task"] if "task" in state else new_task_state()
    if str(choice).lower() in ("continue", "resume", "yes", "approve"):
        # The human takes responsibility for more work: counters restart, the task goes on.
        return {"brake": None, "task": {**task, "steps": 0, "tokens_used": 0, "retries": {}}}
    note = f"Stopped: {trip['reason']}. Start a new task when you are ready."
    return {
        "brake": trip,
        "task": new_task_state(),
        "rejected": f"stopped by a human: {trip['reason']}",
        "messages": [AIMessage(note)],
    }


async def _warm_recall(ctx: Context) -> None:
    """A session starts: load the user's memories into the recall cache in the background.

    Not awaited: this turn's recall is served by L2 if the load has not finished, later turns
    by the in-process cache.
    """
    try:
        config = get_config()
        scope = resolve_scope(ctx, config)
        recaller(await get_store(config)).warm(scope)
    except ScopeError:  # the recall node reports a bad identity; nothing to warm
        return
    except Exception as exc:  # warming only saves time later: it never fails a turn
        log.warning("could not start preloading the recall cache: %s", exc)


async def _prefetch_query(message: HumanMessage, task: TaskState) -> None:
    """Start embedding the query recall will search with, while this step is checkpointed."""
    try:
        recaller(await get_store(get_config())).prefetch(recall_query(message, task))
    except Exception as exc:  # prefetching only saves time: it never fails a turn
        log.warning("could not start embedding the recall query: %s", exc)


def _image_owner(ctx: Context) -> str:
    # Whose share of the process's pixel budget the turn's images use; an unusable identity
    # is refused later by recall, and shares the anonymous share meanwhile.
    try:
        return resolve_scope(ctx, get_config()).key
    except ScopeError:
        return ""


async def _split_secrets(
    state: State, ctx: Context, current: HumanMessage
) -> tuple[list[HumanMessage], dict[str, str]]:
    """Redacted copies of the latest user messages if together they hold a secret, and the parts.

    Each part maps to its placeholder.
    """
    messages = list(state["messages"])
    replaced, parts = await asyncio.to_thread(split_parts, messages, current)
    if not parts:
        return [], {}
    config = get_config()
    thread_id = (config.get("configurable") or {}).get("thread_id")
    try:
        scope: Scope | None = resolve_scope(ctx, config)
    except ScopeError:  # the recall node reports a bad identity; the checkpoints still go
        scope = None
    await remove_parts(await get_store(config), scope, thread_id, parts)
    return replaced, parts


async def perceive(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Normalise the input, extract features, classify, update task state, check brakes."""
    ctx = runtime.context or Context()
    human = latest_human(list(state["messages"]))
    if human is None:
        return {"rejected": "no user message in the input"}
    if sum(isinstance(m, HumanMessage) for m in state["messages"]) == 1:
        await _warm_recall(ctx)
    # The size limit protects the server: the operator's setting, not something a run may raise.
    max_chars = Settings.from_env().max_input_chars
    try:
        # Only content parts can carry images; plain text needs no owner (nor the run's config).
        owner = _image_owner(ctx) if isinstance(human.content, list) else ""
        seen = await perceive_images(human, owner=owner)
        raw = turn_text(human, seen)
        text, kind, features, task = await run_cpu(
            _sense, raw, max_chars, state.get("task"), size=len(raw)
        )
    except (InputError, ImageInputError) as exc:
        reply = AIMessage(f"I could not use that message: {exc}.")
        # A refused image is not kept in the thread's state: its text stays, the image goes.
        kept = [without_images(human)] if isinstance(exc, ImageInputError) else []
        return {"rejected": str(exc), "messages": [*kept, reply]}
    update: dict[str, Any] = {"rejected": "", "brake": None, "images": [], "image_needles": []}
    if state.get("memory_epoch") is None:
        # Captured once per thread: a forget of the user refuses this thread's later writes.
        config = get_config()
        try:
            scope = resolve_scope(ctx, config)
        except ScopeError:  # no identity: the gate refuses to store anything anyway
            pass
        else:
            update["memory_epoch"] = await current_epoch((await get_store(config)).pool, scope)
    if seen is not None:  # images re-encoded without metadata, text cleaned
        update["messages"] = [HumanMessage(content=with_text(seen, text), id=human.id)]
        update.update(images=seen.features, image_needles=seen.needles)
    elif text != human.content:  # cleaned or truncated: replace the stored message (same id)
        update["messages"] = [HumanMessage(content=text, id=human.id)]
    split, parts = await _split_secrets(state, ctx, (update.get("messages") or [human])[0])
    if split:  # what this turn derived from its text loses the parts too
        update["messages"] = split
        task, features = without_parts(task, parts), without_parts(features, parts)
    task = record_step(task, tokens=features["tokens"])
    update.update(sensory=features, turn_kind=kind, task=task)
    trip = check_brakes(task, _limits(ctx))
    if trip is not None:
        braked = _brake({**state, "task": task}, ctx, trip)
        # The brake's note goes after the messages this step replaced (cleaned, redacted).
        messages = [*update.get("messages", []), *braked.get("messages", [])]
        update.update(braked)
        if messages:
            update["messages"] = messages
    else:
        await _prefetch_query((update.get("messages") or [human])[0], task)
    return update
