"""Plain-data shapes of working memory: the rolling summary and the per-turn working context.

TypedDicts of JSON-able values only: they live in LangGraph state and are persisted by the
Postgres checkpointer (JsonPlus/msgpack), which must not meet custom classes.
"""

from __future__ import annotations

from typing import Literal

from langchain_core.messages import BaseMessage
from typing_extensions import TypedDict

from memory.working.context_rules import ItemKind

StrategyName = Literal["sliding_window", "summarization", "selective", "hybrid"]
SummaryMethod = Literal["none", "extractive", "llm"]


class SummaryItem(TypedDict):
    """One piece of decision state pulled from the conversation."""

    kind: ItemKind
    text: str
    role: str  # "user" | "assistant" | "tool": who said it
    index: int  # position of the source message in the thread's (append-only) history
    tokens: int  # count_tokens(text), cached so the hot path never recounts


class SummaryState(TypedDict):
    """The rolling summary: decision state (not prose) of `messages[:covers_upto]`."""

    items: list[SummaryItem]
    covers_upto: int
    # Id of messages[covers_upto - 1] when it had one: detects a rewritten history.
    last_message_id: str | None
    prefix_tokens: int  # tokens of messages[:covers_upto], for cheap "dropped" accounting
    method: SummaryMethod
    tokens: int  # sum of the items' tokens


class WorkingTokens(TypedDict):
    """Token accounting of a working context."""

    messages: int
    summary: int
    decisions: int
    total: int


class WorkingContext(TypedDict):
    """What a strategy puts in front of the model this turn."""

    strategy: StrategyName
    messages: list[BaseMessage]  # raw messages kept, in time order; ends with the latest turn
    summary: list[SummaryItem]  # decision state of the summarised (middle) turns
    decisions: list[SummaryItem]  # key decisions/constraints of the oldest turns
    dropped_messages: int  # messages not kept raw (folded into summary/decisions, or gone)
    dropped_tokens: int  # tokens of those messages
    dropped_items: int  # summary/decision items that did not fit the budget
    unsummarised_messages: int  # of the dropped messages, those no summary has covered yet
    summary_covers_upto: int
    tokens: WorkingTokens


def empty_summary() -> SummaryState:
    """A summary covering nothing yet."""
    return SummaryState(
        items=[], covers_upto=0, last_message_id=None, prefix_tokens=0, method="none", tokens=0
    )
