"""Questions about the past: the value that was true then, from the chain an update left.

An update keeps the value it replaced (`memory.storage.timeline`), out of ordinary recall: a
current question ("where do I live?") finds only the value in force. A question about the past
("where did I live before Munich?", "which editor did I use to use?", "where did I work in
2022?", "我以前住在哪？") still finds the current value by its topic; this module then puts the
value that held at the asked time right above it (first, when the question asks for an
attribute's value), cited with its window:

- a time the question names ("in 2022", "去年") picks the value whose window covers it most;
- "before <value>" picks the value held before the named one;
- "originally", "at first", "最早" pick the oldest;
- any other past marker ("used to", "previously", "以前") picks the value replaced last.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Literal

from memory.attributes import settings
from memory.recall.temporal import TimeRange, query_ranges
from memory.types import MemoryRecord, Relevance, ScoreBreakdown, ScoredMemory

Pick = Literal["time", "before", "first", "last"]

# Bounded, alternation-only patterns: linear on any text.
_BEFORE = re.compile(r"\b(?:before|prior\s+to)\s+(.{1,60})", re.IGNORECASE)
_FIRST = re.compile(
    r"\b(?:originally|at\s+first|in\s+the\s+beginning|first\s+(?:one|place|job|home|used))\b"
    r"|最早|最初|一开始|起初|当初",
    re.IGNORECASE,
)
_PAST = re.compile(
    r"\b(?:used\s+to|use\s+to|previously|formerly|former|in\s+the\s+past|back\s+then|"
    r"back\s+when|back\s+in|earlier|before\s+that|before\s+now|previous|prior)\b"
    r"|以前|之前|原来|原先|过去|曾经|当时|那时|早先|先前|本来|从前|上一个|上一份|前一个",
    re.IGNORECASE,
)
_PAST_TENSE = re.compile(r"\b(?:did|was|were|had)\b", re.IGNORECASE)
_ZH_BEFORE = re.compile(r"(.{1,12})(?:之前|以前)")
_WORD = re.compile(r"[^\W\d_]{2,}|\d+", re.UNICODE)
_CJK = re.compile(r"[\u4e00-\u9fff]")
LIFT = 1e-6
"""How far above its successor (or the best hit) an earlier value is placed, reordering nothing."""


@dataclass(frozen=True, slots=True)
class PastQuestion:
    """How a question about the past picks among a chain's values."""

    pick: Pick
    ranges: tuple[TimeRange, ...] = ()
    named: str = ""  # "before <named>": the text after the marker
    past_tense: bool = False  # "before" with no named value falls back to the last one only then


def past_question(query: str, now: datetime | None = None) -> PastQuestion | None:
    """How `query` asks about an earlier value, or None when it does not."""
    now = now or datetime.now(UTC)
    ranges = tuple(r for r in query_ranges(query, now) if r.end <= now)
    if ranges:
        return PastQuestion("time", ranges)
    before = _BEFORE.search(query)
    if before:
        return PastQuestion(
            "before", named=before.group(1), past_tense=bool(_PAST_TENSE.search(query))
        )
    zh_before = _ZH_BEFORE.search(query) if _CJK.search(query) else None
    if _FIRST.search(query):
        return PastQuestion("first")
    if zh_before and _CJK.search(zh_before.group(1)):
        return PastQuestion("before", named=zh_before.group(1), past_tense=True)
    if _PAST.search(query):
        return PastQuestion("last")
    return None


def _tokens(text: str) -> set[str]:
    words = {w.casefold() for w in _WORD.findall(text)}
    for run in re.findall(r"[\u4e00-\u9fff]+", text):
        words.update(run[i : i + 2] for i in range(max(len(run) - 1, 1)))
    return words


def held_from(record: MemoryRecord) -> datetime:
    """When a value began to hold: its window's start, else when it was said."""
    return record.valid_from or record.occurred_at


def _overlap(record: MemoryRecord, end: datetime, asked: TimeRange) -> float:
    lo, hi = max(held_from(record), asked.start), min(end, asked.end)
    return max((hi - lo).total_seconds(), 0.0)


def pick(question: PastQuestion, current: MemoryRecord | None, earlier: Sequence[MemoryRecord],
         now: datetime) -> MemoryRecord | None:  # fmt: skip
    """The earlier value (newest first in `earlier`) the question asks for; None: the current.

    `current` is the value in force when recall found it (None when only replaced values are
    known, as for `from_replaced`).
    """
    if not earlier:
        return None
    if question.pick == "first":
        return earlier[-1]
    if question.pick == "last":
        return earlier[0]
    chain = [current, *earlier] if current is not None else list(earlier)  # newest first
    if question.pick == "time":
        ends = [r.valid_to or now for r in chain]
        best, best_overlap = None, 0.0
        for record, end in zip(chain, ends, strict=True):
            covered = sum(_overlap(record, end, asked) for asked in question.ranges)
            if covered > best_overlap:
                best, best_overlap = record, covered
        return None if best is None or best is current else best
    named = _tokens(question.named)
    words = [_tokens(r.content) for r in chain]
    for i, record_words in enumerate(words):
        others = set().union(*(w for j, w in enumerate(words) if j != i))
        if named & (record_words - others):
            return chain[i + 1] if i + 1 < len(chain) else None
    return earlier[0] if question.past_tense else None


def from_replaced(
    question: PastQuestion, asked: frozenset[str], replaced: Sequence[MemoryRecord], now: datetime
) -> MemoryRecord | None:
    """The replaced value of an asked attribute the question means, when recall found no chain.

    "Where did I live in 2020?" may find no current value to follow back from (its words are
    far from "These days I'm in Hamburg"); the values updates replaced are few and carry the
    attribute they set, so they are read directly. `replaced` is newest window first.
    """
    if not asked:
        return None
    values = [r for r in replaced if any(s.attribute in asked for s in settings(r.content))]
    return pick(question, None, values, now)


def earlier_value(
    chosen: MemoryRecord, hits: Sequence[ScoredMemory], asked: frozenset[str]
) -> ScoredMemory:
    """`chosen` (found by `from_replaced`) as a result placed above every hit, saying why."""
    top = max((h.score for h in hits), default=0.0)
    why = f"held earlier; sets the asked attribute ({', '.join(sorted(asked))})"
    relevance = Relevance(passed=True, cosine=0.0, words=0.0, reason=why)
    breakdown = ScoreBreakdown(0.0, 0.0, 0.0, 0.0, 0.0, relevance=relevance, attribute=top + LIFT)
    return ScoredMemory(record=chosen, score=breakdown.total, breakdown=breakdown)


def with_history(
    hits: Sequence[ScoredMemory],
    earlier: Mapping[str, Sequence[MemoryRecord]],
    question: PastQuestion,
    now: datetime,
    *,
    first: bool = False,
) -> list[ScoredMemory]:
    """`hits` with the earlier value the question asks for of each hit that replaced some.

    Each goes right above the hit it led back from; with `first` (the question asks for an
    attribute's value: "2017年我开的是什么车？") all of them go above every hit, in the order of
    their hits, since a hit found by a shared word ("我开了家小超市", by its 开) may rank above
    the chain's current value.
    """
    chosen: dict[str, MemoryRecord] = {}
    shown = {h.record.id for h in hits}
    for hit in hits:
        value = pick(question, hit.record, earlier.get(hit.record.id, ()), now)
        if value is not None and value.id not in shown:
            shown.add(value.id)
            chosen[hit.record.id] = value
    top = max((h.score for h in hits), default=0.0)
    lifted: list[ScoredMemory] = []
    out: list[ScoredMemory] = []
    for hit in hits:
        value = chosen.get(hit.record.id)
        if value is not None:
            rank = len(lifted)
            above = top - hit.score + LIFT * (len(chosen) - rank) if first else LIFT
            breakdown = replace(hit.breakdown, temporal=hit.breakdown.temporal + above)
            lifted_value = ScoredMemory(record=value, score=breakdown.total, breakdown=breakdown)
            (lifted if first else out).append(lifted_value)
        out.append(hit)
    return [*lifted, *out]
