"""The agent's graph state: working memory, persisted per thread by the Postgres checkpointer.

Every value is plain JSON-like data (TypedDicts, lists, strings, numbers) plus LangChain
messages, so the checkpointer's serializer round-trips it exactly (seed 003 pitfall 10).
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

from memory.multimodal.image_input import ImageFeatures
from memory.working.brakes import BrakeTrip
from memory.working.prompt_sections import EvidenceItem, PrefItem
from memory.working.scratchpad import ScratchpadEntry
from memory.working.sensory import SensoryFeatures
from memory.working.task_state import TaskState
from memory.working.working_types import SummaryState


class InputState(TypedDict):
    """What a caller sends: the new message(s)."""

    messages: Annotated[list[AnyMessage], add_messages]


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
    images: list[ImageFeatures]  # features of this turn's images (never their bytes)
    image_needles: list[str]  # fragments of this turn's original images, to scrub their copies
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
