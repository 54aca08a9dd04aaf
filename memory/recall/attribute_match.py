"""A question that asks for an attribute's value finds the memory that sets it.

"Where do I live?" and "We relocated to Hamburg in December." share no word, and a small
embedding model puts them far apart (MiniLM: cosine 0.19, under the relevance floor), yet the
second is the answer. `memory.attributes` reads which attribute a question asks for and which
one a statement sets (residence, employer, editor, drink, a meeting's time, a project's
decision, English and Chinese); a recalled memory that sets an asked attribute passes the floor
and is placed above the others, keeping the order the ranking gave among such memories.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from memory.attributes import asked_attributes, settings
from memory.types import MemoryRecord, Relevance, ScoreBreakdown

MARGIN = 1e-3
"""How far above the best other result the lifted memories start."""


def _sets(record: MemoryRecord, asked: frozenset[str]) -> str | None:
    for found in settings(record.content):
        if found.attribute in asked and not found.negative:
            return found.attribute
    return None


def promote(
    query: str,
    hits: Sequence[tuple[str, ScoreBreakdown]],
    records: Mapping[str, MemoryRecord],
) -> list[tuple[str, ScoreBreakdown]]:
    """`hits` (id, breakdown), best first, with the memories that set an asked attribute first."""
    asked = asked_attributes(query)
    if not asked or not hits:
        return list(hits)
    matched = {
        mid: attribute
        for mid, _ in hits
        if mid in records and (attribute := _sets(records[mid], asked)) is not None
    }
    if not matched:
        return list(hits)
    top = max(b.total for _, b in hits)
    lift = top - min(b.total for mid, b in hits if mid in matched) + MARGIN
    out = []
    for mid, b in hits:
        if mid in matched:
            b = replace(b, attribute=lift, relevance=_passed(b.relevance, matched[mid]))
        out.append((mid, b))
    return sorted(out, key=lambda hit: hit[1].total, reverse=True)


def _passed(relevance: Relevance | None, attribute: str) -> Relevance | None:
    if relevance is None or relevance.passed:
        return relevance
    why = f"sets the attribute the question asks for ({attribute}); {relevance.reason}"
    return replace(relevance, passed=True, reason=why)
