"""Fit a working context into a token budget.

Priority (seed 002 §五, DESIGN §3): the latest turn is always kept whole; then summary and
key-decision items (constraints first, then decisions, failures, open items, facts; newest
first within a kind); then older raw messages, newest first, stopping at the first that does
not fit so the kept history stays contiguous.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from langchain_core.messages import BaseMessage

from memory.working.context_rules import KIND_ORDER
from memory.working.tokens import count_message_tokens
from memory.working.turns import last_human_index, repair_tool_pairs
from memory.working.working_types import SummaryItem

# Rendering an item as "- [kind] text" costs its text plus about 4 tokens.
ITEM_LINE_OVERHEAD = 4


def item_cost(item: SummaryItem) -> int:
    """Tokens one rendered summary line costs."""
    return item["tokens"] + ITEM_LINE_OVERHEAD


def select_items(items: Sequence[SummaryItem], budget: int) -> tuple[list[bool], int]:
    """Which items fit `budget` by priority (kind order, then newest); and the tokens used."""
    order = sorted(
        range(len(items)),
        key=lambda i: (KIND_ORDER.index(items[i]["kind"]), -items[i]["index"]),
    )
    keep = [False] * len(items)
    used = 0
    for i in order:
        cost = item_cost(items[i])
        if used + cost <= budget:
            keep[i] = True
            used += cost
    return keep, used


class Packed(NamedTuple):
    """The outcome of fitting: what was kept and what it costs."""

    messages: list[BaseMessage]
    summary: list[SummaryItem]
    decisions: list[SummaryItem]
    message_tokens: int
    summary_tokens: int
    decision_tokens: int
    dropped_items: int
    dropped_raw: int


def _older_raw(older: Sequence[BaseMessage], budget: int) -> tuple[list[BaseMessage], int]:
    """The newest contiguous suffix of `older` that fits `budget`, and its tokens."""
    used = 0
    start = len(older)
    for i in range(len(older) - 1, -1, -1):
        cost = count_message_tokens(older[i])
        if used + cost > budget:
            break
        used += cost
        start = i
    return list(older[start:]), used


def pack(
    raw: Sequence[BaseMessage],
    summary: Sequence[SummaryItem],
    decisions: Sequence[SummaryItem],
    budget: int,
) -> Packed:
    """Fit candidate raw messages (ending with the latest turn) and items into `budget`."""
    cut = last_human_index(raw)
    cut = 0 if cut is None else cut
    current = list(raw[cut:])
    current_tokens = sum(count_message_tokens(m) for m in current)
    left = max(budget - current_tokens, 0)
    pool = [*summary, *decisions]
    keep, item_tokens = select_items(pool, left)
    kept_summary = [it for it, k in zip(summary, keep, strict=False) if k]
    kept_decisions = [it for it, k in zip(decisions, keep[len(summary) :], strict=True) if k]
    older, _ = _older_raw(raw[:cut], left - item_tokens)
    messages = repair_tool_pairs([*older, *current])
    decision_tokens = sum(item_cost(it) for it in kept_decisions)
    return Packed(
        messages=messages,
        summary=kept_summary,
        decisions=kept_decisions,
        message_tokens=sum(count_message_tokens(m) for m in messages),
        summary_tokens=item_tokens - decision_tokens,
        decision_tokens=decision_tokens,
        dropped_items=len(pool) - sum(keep),
        dropped_raw=len(raw) - len(messages),
    )
