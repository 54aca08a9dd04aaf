"""The agent's graph state: working memory, persisted per thread by the Postgres checkpointer.

Every value is plain JSON-like data (TypedDicts, lists, strings, numbers) plus LangChain
messages, so the checkpointer's serializer round-trips it exactly (seed 003 pitfall 10).
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage, BaseMessage, SystemMessage
from langgraph.graph.message import Messages, add_messages

from memory.working.brakes import BrakeTrip
from memory.working.prompt_sections import EvidenceItem, PrefItem
from memory.working.scratchpad import ScratchpadEntry
from memory.working.sensory import SensoryFeatures
from memory.working.task_state import TaskState
from memory.working.working_types import SummaryState

_SYSTEM_ROLES = frozenset({"system", "developer"})


class InputMessageError(ValueError):
    """A message in a run's input that the server refuses (the run fails with this text)."""


def _role_of(message: Any) -> str:
    if isinstance(message, BaseMessage):
        return "system" if isinstance(message, SystemMessage) else message.type
    if isinstance(message, dict):
        return str(message.get("role") or message.get("type") or "")
    if isinstance(message, list | tuple) and message:
        return str(message[0])
    return ""


def add_turn_messages(left: Messages, right: Messages) -> Messages:
    """`add_messages` that refuses system text from a client and explains malformed messages.

    Only the composer writes system text, into the prompt it builds each turn, never into the
    thread: a message with role system (or developer) arriving in `messages` is a client trying
    to speak as the system, and the whole update is refused before anything is stored. A message
    the converter cannot read (a tool message without `tool_call_id`, an unknown role) gets a
    clear error instead of a bare `KeyError` from deep inside the converter.
    """
    incoming = right if isinstance(right, list) else [right]
    for message in incoming:
        if _role_of(message).lower() in _SYSTEM_ROLES:
            raise InputMessageError(
                "messages with role 'system' are refused: only the server writes system text; "
                "send the text as a user message"
            )
        if (
            isinstance(message, dict)
            and str(message.get("role", "")).lower() == "tool"
            and (not message.get("tool_call_id"))
        ):
            raise InputMessageError("a message with role 'tool' needs a 'tool_call_id'")
    try:
        return add_messages(left, right)
    except (KeyError, TypeError, ValueError, NotImplementedError) as exc:
        raise InputMessageError(f"a message in the input could not be read: {exc}") from None


class InputState(TypedDict):
    """What a caller sends: the new message(s)."""

    messages: Annotated[list[AnyMessage], add_turn_messages]


class GateRecord(TypedDict):
    """One gate decision of the last turn, for Studio and tests (content is redacted)."""

    action: str
    category: str
    kind: str
    importance: float
    reason: str
    memory_id: str | None


class State(InputState, total=False):
    """Working memory: the thread's turns plus the structures the seeds describe."""

    sensory: SensoryFeatures  # this turn's input features (sensory memory)
    turn_kind: str  # question / instruction / preference / correction / chitchat
    rejected: str  # why this turn's input was refused (empty input), if it was
    task: TaskState  # goal, step, constraints, attempts, last error, next action, counters
    scratchpad: list[ScratchpadEntry]
    summary: SummaryState | None  # newest finished rolling summary
    brake: BrakeTrip | None  # the brake that tripped this turn, if any
    preferences: list[PrefItem]  # long-term memories injected as rules
    evidence: list[EvidenceItem]  # recalled memories injected as cited snippets
    rules_recalled: list[EvidenceItem]  # the long-term memories behind `preferences`
    prompt: list[AnyMessage]  # what compose built for respond (replaced every turn)
    prompt_tokens: dict[str, int]  # compose's per-section token accounting
    injected_ids: list[str]  # the memories that made it into the prompt (for hit-rate metrics)
    gate: list[GateRecord]  # what gate_and_store did with this turn
    pending_approval: list[dict[str, Any]]  # memories waiting for a human decision
