"""Near-duplicate long-term memories (cosine ≥ 0.92: near-restatements only) and which one survives.

The survivor is the memory the conflict policy ranks highest: pinned first, then explicit >
learned > inferred, then confidence, then the newest. A pinned memory is never absorbed; two
statements of opposite polarity are never duplicates however close their vectors (MiniLM puts
"I prefer X" and "I don't want X" at 0.84).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from memory.longterm.consolidation.agreement import is_negative
from memory.longterm.consolidation.cluster import CosineMap, Matrix, cosines, normalise_rows
from memory.types import MemoryRecord, Origin

_ORIGIN_RANK = {Origin.EXPLICIT: 2, Origin.LEARNED: 1, Origin.INFERRED: 0}


@dataclass(frozen=True, slots=True)
class MergeGroup:
    """A survivor and the near-duplicates it absorbs, with each one's cosine to it."""

    survivor: MemoryRecord
    absorbed: tuple[tuple[MemoryRecord, float], ...]


def survivor_key(record: MemoryRecord) -> tuple[bool, int, float, float, str]:
    """Sort key, highest first: pinned, origin rank, confidence, recency, then id."""
    return (
        record.pinned,
        _ORIGIN_RANK[record.origin],
        record.confidence,
        record.occurred_at.timestamp(),
        record.id,
    )


def near_duplicates(
    records: Sequence[MemoryRecord],
    vectors: Matrix,
    *,
    threshold: float,
    to_reference: CosineMap | None = None,
) -> list[MergeGroup]:
    """Greedy grouping: each memory, strongest first, absorbs the weaker ones close to it."""
    if len(records) < 2:
        return []
    order = sorted(range(len(records)), key=lambda i: survivor_key(records[i]), reverse=True)
    points = normalise_rows(np.asarray(vectors, dtype=np.float32))
    sims = cosines(points, points.T, to_reference)
    polarity = [is_negative(r.content) for r in records]
    absorbed: set[int] = set()
    groups: list[MergeGroup] = []
    for pos, i in enumerate(order):
        if i in absorbed:
            continue
        taken: list[tuple[MemoryRecord, float]] = []
        for j in order[pos + 1 :]:
            if j in absorbed or records[j].pinned or polarity[j] != polarity[i]:
                continue
            if sims[i, j] >= threshold:
                absorbed.add(j)
                taken.append((records[j], round(float(sims[i, j]), 4)))
        if taken:
            groups.append(MergeGroup(records[i], tuple(taken)))
    return groups


def merged_fields(group: MergeGroup) -> dict[str, object]:
    """The survivor's new statistics: the best confidence and importance, summed accesses.

    A pinned survivor keeps its fields (it is a business rule; only the link is recorded).
    """
    survivor = group.survivor
    if survivor.pinned:
        return {}
    others = [r for r, _ in group.absorbed]
    last_seen = [r.last_accessed for r in [survivor, *others] if r.last_accessed is not None]
    merged_from = list(survivor.provenance.get("merged_from", []))
    merged_from += [r.id for r in others if r.id not in merged_from]
    return {
        "confidence": max(r.confidence for r in [survivor, *others]),
        "importance": max(r.importance for r in [survivor, *others]),
        "access_count": survivor.access_count + sum(r.access_count for r in others),
        "last_accessed": max(last_seen) if last_seen else None,
        "provenance": {**survivor.provenance, "merged_from": merged_from},
    }
