"""Working-memory context strategies, chosen by name, and fitting the context to its budget.

- `sliding_window`: the last `window_turns` turns raw; older turns are gone.
- `summarization`: the last `recent_turns` turns raw; everything older only through the
  rolling summary (all kinds of decision state).
- `selective`: the most important messages (rules: constraints, decisions, errors, numbers,
  names) within the budget, returned in time order. Scores every message: O(history).
  Importance is rule-based (`context_rules.importance`), not a model call per message (which
  would cost one LLM call per message); a small recency term breaks ties toward newer messages.
- `hybrid` (default): the last 3 turns raw, turns 4-10 through the summary, older turns only as
  key decisions (decisions and the user's constraints).

All strategies keep the latest turn whole and fit the rest to `budget_tokens` (`pack`): then
summary and key-decision items (constraints first, then decisions, failures, open items, facts;
newest first within a kind); then older raw messages, newest first, stopping at the first that
does not fit so the kept history stays contiguous. The summary comes from `refresh_summary`,
run after the previous reply; messages it does not cover yet inside the summary window are
extracted on the spot (cheap rules, bounded to that window), so a turn is never blocked on a
model call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from langchain_core.messages import BaseMessage

from memory.working.context_rules import KIND_ORDER, ItemKind, importance
from memory.working.summary import extract_items
from memory.working.tokens import content_text, count_message_tokens, count_messages_tokens
from memory.working.turns import (
    last_human_index,
    repair_tool_pairs,
    role_of,
    start_of_last_turns,
    summary_matches,
    tokens_before,
)
from memory.working.working_types import (
    StrategyName,
    SummaryItem,
    SummaryState,
    WorkingContext,
    WorkingTokens,
)

STRATEGIES: tuple[StrategyName, ...] = ("sliding_window", "summarization", "selective", "hybrid")
# What survives of turns older than the summary window: only the key decisions.
KEY_KINDS: frozenset[ItemKind] = frozenset({"constraint", "decision"})

# -- fitting to the budget --------------------------------------------------------------------

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


# -- selective retention -----------------------------------------------------------------------

# Recency is worth at most half a "number" signal: importance decides, recency breaks ties.
RECENCY_WEIGHT = 0.5


def select_messages(messages: Sequence[BaseMessage], budget_tokens: int) -> list[BaseMessage]:
    """The most important messages that fit `budget_tokens`, in their original order.

    The latest turn (last user message and what follows it) is kept first, whatever it costs.
    Orphaned tool results are repaired later by `repair_tool_pairs`.
    """
    cut = last_human_index(messages)
    cut = 0 if cut is None else cut
    keep = set(range(cut, len(messages)))
    used = sum(count_message_tokens(messages[i]) for i in keep)
    n = max(cut, 1)
    scored = []
    for i in range(cut):
        msg = messages[i]
        role = role_of(msg)
        if role == "system":
            continue
        score = importance(content_text(msg.content), role) + RECENCY_WEIGHT * i / n
        scored.append((score, i))
    for _, i in sorted(scored, reverse=True):
        cost = count_message_tokens(messages[i])
        if used + cost <= budget_tokens:
            keep.add(i)
            used += cost
    return [messages[i] for i in sorted(keep)]


# -- the strategies ----------------------------------------------------------------------------


def _in_range(items: Sequence[SummaryItem], lo: int, hi: int) -> list[SummaryItem]:
    return [it for it in items if lo <= it["index"] < hi]


def _gap(messages: Sequence[BaseMessage], covered: int, lo: int, hi: int) -> list[SummaryItem]:
    """Rule-extracted items of `messages[max(covered, lo):hi]`, the part no summary covers yet.

    Bounded by the summary window, so a thread whose summary lags (or has none) costs at most
    `summary_turns` turns of regex work (~20 µs per message), never the whole history.
    """
    start = max(covered, lo)
    return extract_items(messages[start:hi], start) if start < hi else []


def _result(
    strategy: StrategyName,
    messages: Sequence[BaseMessage],
    packed: Packed,
    summary: SummaryState | None,
    unsummarised: int,
    dropped_tokens: int | None = None,
) -> WorkingContext:
    kept_from = len(messages) - len(packed.messages)
    valid = summary is not None and summary_matches(summary, messages)
    if dropped_tokens is None:
        # The kept raw messages are a suffix of the history, so this costs O(kept).
        dropped_tokens = tokens_before(messages, kept_from, summary if valid else None)
    tokens = WorkingTokens(
        messages=packed.message_tokens,
        summary=packed.summary_tokens,
        decisions=packed.decision_tokens,
        total=packed.message_tokens + packed.summary_tokens + packed.decision_tokens,
    )
    return WorkingContext(
        strategy=strategy,
        messages=packed.messages,
        summary=packed.summary,
        decisions=packed.decisions,
        dropped_messages=kept_from,
        dropped_tokens=dropped_tokens,
        dropped_items=packed.dropped_items,
        unsummarised_messages=unsummarised,
        summary_covers_upto=summary["covers_upto"] if summary is not None and valid else 0,
        tokens=tokens,
    )


def build_working_context(
    messages: Sequence[BaseMessage],
    *,
    strategy: StrategyName = "hybrid",
    summary: SummaryState | None = None,
    budget_tokens: int = 6000,
    recent_turns: int = 3,
    summary_turns: int = 10,
    window_turns: int = 8,
) -> WorkingContext:
    """The working context for this turn, by strategy, within `budget_tokens`.

    `messages` is the thread's full, append-only history ending with the latest user turn;
    `summary` is the newest finished `SummaryState` for it (or None).
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown context strategy {strategy!r}; choose one of {STRATEGIES}")
    if strategy == "selective":
        kept = select_messages(messages, budget_tokens)
        packed = pack(kept, [], [], budget_tokens)
        dropped = count_messages_tokens(messages) - packed.message_tokens
        lost = len(messages) - len(packed.messages)
        return _result(strategy, messages, packed, None, lost, max(dropped, 0))
    if strategy == "sliding_window":
        start = start_of_last_turns(messages, window_turns)
        packed = pack(messages[start:], [], [], budget_tokens)
        return _result(strategy, messages, packed, summary, len(messages) - len(packed.messages))
    recent = start_of_last_turns(messages, recent_turns)
    window = start_of_last_turns(messages, summary_turns)
    valid = summary is not None and summary_matches(summary, messages)
    covered = summary["covers_upto"] if summary is not None and valid else 0
    items = summary["items"] if summary is not None and valid else []
    gap = _gap(messages, covered, window, recent)
    if strategy == "summarization":
        packed = pack(messages[recent:], [*_in_range(items, 0, recent), *gap], [], budget_tokens)
    else:
        old = [it for it in _in_range(items, 0, window) if it["kind"] in KEY_KINDS]
        mid = [*_in_range(items, window, recent), *gap]
        packed = pack(messages[recent:], mid, old, budget_tokens)
    return _result(strategy, messages, packed, summary, max(window - covered, 0))
