"""Working-memory context strategies (seed 000 §2.2, seed 003 §二), chosen by name.

- `sliding_window`: the last `window_turns` turns raw; older turns are gone.
- `summarization`: the last `recent_turns` turns raw; everything older only through the
  rolling summary (all kinds of decision state).
- `selective`: the most important messages (rules: constraints, decisions, errors, numbers,
  names) within the budget, returned in time order. Scores every message: O(history).
- `hybrid` (default, seed 003): the last 3 turns raw, turns 4-10 through the summary, older
  turns only as key decisions (decisions and the user's constraints).

All strategies keep the latest turn whole and fit the rest to `budget_tokens`
(`memory.working.context_fit`). The summary comes from `refresh_summary`, run after the previous
reply;
messages it does not cover yet inside the summary window are extracted on the spot (cheap rules,
bounded to that window), so a turn is never blocked on a model call.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage

from memory.working.context_fit import Packed, pack
from memory.working.context_rules import ItemKind
from memory.working.context_selective import select_messages
from memory.working.summary_extract import extract_items
from memory.working.tokens import count_messages_tokens
from memory.working.turns import start_of_last_turns, summary_matches, tokens_before
from memory.working.working_types import (
    StrategyName,
    SummaryItem,
    SummaryState,
    WorkingContext,
    WorkingTokens,
)

STRATEGIES: tuple[StrategyName, ...] = ("sliding_window", "summarization", "selective", "hybrid")
# What survives of turns older than the summary window (seed 003: "only key decisions").
KEY_KINDS: frozenset[ItemKind] = frozenset({"constraint", "decision"})


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
