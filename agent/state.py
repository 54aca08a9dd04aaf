"""The agent's graph state: working memory, persisted per thread by the Postgres checkpointer.

Every value is plain JSON-like data (TypedDicts, lists, strings, numbers) plus LangChain
messages, so the checkpointer's serializer round-trips it exactly. The TypedDicts come from
`typing_extensions` and every field carries a `Field` description: the server derives the
input/output/state JSON schemas Studio shows from them (pydantic refuses `typing.TypedDict`
before Python 3.12, and the schemas would come back null).
"""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
)
from langgraph.graph.message import Messages, add_messages
from pydantic import Field
from typing_extensions import TypedDict

from memory.multimodal.image_input import ImageFeatures
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


def _calls_tools(message: dict[Any, Any]) -> bool:
    extra = message.get("additional_kwargs")
    extra = extra if isinstance(extra, dict) else {}
    keys = ("tool_calls", "function_call")
    return any(bool(where.get(key)) for where in (message, extra) for key in keys)


def _as_message(message: Any) -> BaseMessage | None:
    """A client's message as LangChain reads it (any form it accepts); None if it cannot."""
    if isinstance(message, BaseMessage):
        return message
    try:
        return convert_to_messages([message])[0]
    except (KeyError, TypeError, ValueError, NotImplementedError):
        return None  # `add_messages` then fails with the clear error below


def _speaks_as_system(message: BaseMessage) -> bool:
    role = message.role if isinstance(message, ChatMessage) else message.type
    return isinstance(message, SystemMessage) or str(role).lower() in _SYSTEM_ROLES


def _is_tool_result(message: BaseMessage) -> bool:
    kinds = ("tool", "function")
    return isinstance(message, ToolMessage | FunctionMessage) or message.type in kinds


def _calls_a_tool(message: BaseMessage) -> bool:
    if isinstance(message, AIMessage) and (message.tool_calls or message.invalid_tool_calls):
        return True
    return _calls_tools(message.additional_kwargs)


def add_turn_messages(left: Messages, right: Messages) -> Messages:
    """`add_messages` that refuses system text from a client and explains malformed messages.

    Only the composer writes system text, into the prompt it builds each turn, never into the
    thread: a message with role system (or developer) arriving in `messages` is a client trying
    to speak as the system, and the whole update is refused before anything is stored. So is a
    client's tool result or tool call (the nodes return message objects; a client sends dicts,
    pairs or serialized objects, each judged as LangChain reads it): a forged `finish_task`
    result would publish its text to the tenant's agents. A message the
    converter cannot read (an unknown role) gets a clear error instead of a bare `KeyError`
    from deep inside the converter.
    """
    incoming = right if isinstance(right, list) else [right]
    for message in incoming:
        # The nodes return message objects; anything else is what a client sent, judged as
        # LangChain will read it: a dict by role or type, a pair, or a serialized object
        # (`{"lc": 1, "id": [..., "ToolMessage"], ...}`), which names no role at all.
        client = not isinstance(message, BaseMessage)
        read = _as_message(message)
        if _role_of(message).lower() in _SYSTEM_ROLES or (
            read is not None and _speaks_as_system(read)
        ):
            raise InputMessageError(
                "messages with role 'system' are refused: only the server writes system text; "
                "send the text as a user message"
            )
        if client and (
            (isinstance(message, dict) and _role_of(message).lower() == "tool")
            or (read is not None and _is_tool_result(read))
        ):
            # A tool's result (and its artifact: a finished task the gate publishes to the
            # tenant's agents, a scratchpad write) is the server's own tool's, never the
            # client's to write.
            raise InputMessageError(
                "messages with role 'tool' are refused: tool results come only from the "
                "server's own tools"
            )
        if client and (
            (isinstance(message, dict) and _calls_tools(message))
            or (read is not None and _calls_a_tool(read))
        ):
            raise InputMessageError(
                "messages with tool calls are refused: only the server's model calls tools"
            )
    try:
        return add_messages(left, right)
    except (KeyError, TypeError, ValueError, NotImplementedError) as exc:
        raise InputMessageError(f"a message in the input could not be read: {exc}") from None


def _d(text: str) -> Any:
    return Field(description=text)


class InputState(TypedDict):
    """What a caller sends: the new message(s)."""

    # The reducer must stay the last annotation: LangGraph reads the channel's reducer from it.
    messages: Annotated[
        list[AnyMessage],
        _d("The conversation: send the user's new message; the agent appends its reply."),
        add_turn_messages,
    ]


class GateRecord(TypedDict):
    """One gate decision of the last turn, for Studio and tests (content is redacted)."""

    action: Annotated[str, _d("What the gate did: stored, updated, dropped, pending, ...")]
    category: Annotated[str, _d("The gate's category for the candidate.")]
    kind: Annotated[str, _d("Memory kind: episodic, semantic, procedural or preference.")]
    importance: Annotated[float, _d("Importance score in [0, 1].")]
    reason: Annotated[str, _d("Why the gate decided so.")]
    memory_id: Annotated[str | None, _d("The memory written or updated, if any.")]


class State(InputState, total=False):
    """Working memory: the thread's turns plus the structures the agent keeps per thread."""

    sensory: Annotated[SensoryFeatures, _d("This turn's input features (sensory memory).")]
    images: Annotated[
        list[ImageFeatures], _d("Features of this turn's images (never their bytes).")
    ]
    image_needles: Annotated[
        list[str], _d("Fragments of this turn's original images, to scrub their stored copies.")
    ]
    turn_kind: Annotated[
        str, _d("The turn's class: question, instruction, preference, correction or chitchat.")
    ]
    rejected: Annotated[str, _d("Why this turn's input was refused (e.g. empty), if it was.")]
    task: Annotated[
        TaskState,
        _d("Task state: goal, step, constraints, attempts, last error, next action, counters."),
    ]
    scratchpad: Annotated[list[ScratchpadEntry], _d("The agent's categorised notes.")]
    summary: Annotated[
        SummaryState | None, _d("The newest rolling summary of older turns (decision state).")
    ]
    brake: Annotated[BrakeTrip | None, _d("The hard brake that tripped this turn, if any.")]
    preferences: Annotated[list[PrefItem], _d("Long-term preferences injected as rules.")]
    evidence: Annotated[
        list[EvidenceItem], _d("Recalled memories injected as cited snippets this turn.")
    ]
    rules_recalled: Annotated[
        list[EvidenceItem], _d("The long-term memories behind `preferences`.")
    ]
    prompt: Annotated[
        list[dict[str, Any]],
        _d(
            "The prompt compose built for respond, as serialised messages (kept out of the "
            "chat; replaced every turn)."
        ),
    ]
    prompt_tokens: Annotated[dict[str, int], _d("Compose's token count per prompt section.")]
    injected_ids: Annotated[
        list[str], _d("The memories that made it into the prompt (for hit-rate metrics).")
    ]
    gate: Annotated[list[GateRecord], _d("What gate_and_store did with this turn.")]
    gated_upto: Annotated[
        str, _d("Id of the newest human message the gate has seen (its watermark).")
    ]
    pending_approval: Annotated[
        list[dict[str, Any]], _d("High-risk memories waiting for a human decision.")
    ]
    memory_epoch: Annotated[
        int,
        _d(
            "The user's epoch when this thread began: once the user is forgotten, nothing of "
            "this thread is written again (a new start needs a new thread)."
        ),
    ]
