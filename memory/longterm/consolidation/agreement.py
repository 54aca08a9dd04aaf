"""Which episodes of a theme agree: polarity first, then a vote with the gate's conflict detector.

Clustering groups by embedding, and MiniLM cannot tell "tea in the morning" from "coffee in the
morning" (cosine 0.81) nor "use X" from "don't use X" (0.84). So within a cluster:

1. the majority polarity wins (`is_negative` on the first clause);
2. each remaining episode is compared with every other by `memory.gating.conflicts.relation.relate`;
   an episode that contradicts more than half of the others is out. A vote rather than a
   comparison with one representative, because the detector misfires on single pairs
   ("window seats on flights" vs "the window seat on the plane") far more often than on a
   majority;
3. facts must be restatements of one another (cosine ≥ 0.8 to most others; paraphrases of one
   fact score 0.8-0.95 with MiniLM): similar events ("met Tom in Oslo about X", "met Ana in
   Lima about Y", 0.6-0.75) are not one stable fact however often they happen. A vector test,
   because the conflict detector costs ~0.2 ms a pair and event clusters are the most common.

The detector embeds the words two statements differ in; all of a cluster's pairs are embedded
in one batch (one ONNX call, ~5 ms) instead of one call per pair (~2 ms each, n² of them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from memory.gating.conflicts.frames import Frame, analyse
from memory.gating.conflicts.relation import EmbedFn, relate
from memory.longterm.consolidation.cluster import CosineMap, Matrix, cosines, normalise_rows
from memory.types import Category, MemoryRecord

# Negation of the main statement: looked for in the first clause only, so "TypeScript, not
# JavaScript" stays positive while "don't use TypeScript" is negative.
_NEGATION = re.compile(
    r"\b(?:don'?t|do not|doesn'?t|does not|never|no longer|not|stop|stopped|avoid|hate"
    r"|dislike|can'?t stand)\b|不再|不喜欢|不要|不用|别|讨厌",
    re.IGNORECASE,
)
_CLAUSE = re.compile(r"[,;.!?，；。！？]|\bbut\b|但是|不过")


def is_negative(text: str) -> bool:
    """True when the statement's first clause is negated ("don't ...", "不要 ...")."""
    first = _CLAUSE.split(text.strip(), maxsplit=1)[0]
    return bool(_NEGATION.search(first))


def majority_polarity(records: Sequence[MemoryRecord]) -> list[int]:
    """Indexes of the episodes with the majority polarity (positive on a tie)."""
    flags = [is_negative(r.content) for r in records]
    negative = sum(flags) * 2 > len(flags)
    return [i for i, f in enumerate(flags) if f == negative]


def _batched_embed(frames: Sequence[Frame], embed: EmbedFn) -> EmbedFn:
    """An embed function answering the detector's value lookups from one batched call."""
    texts = {
        " ".join(sorted(a.values - b.values))
        for a in frames
        for b in frames
        if a is not b and a.values - b.values and b.values - a.values
    }
    ordered = sorted(texts)
    cache = dict(zip(ordered, embed(ordered), strict=True)) if ordered else {}

    def lookup(batch: list[str]) -> npt.NDArray[np.float32]:
        missing = [t for t in batch if t not in cache]
        if missing:
            cache.update(zip(missing, embed(missing), strict=True))
        return np.vstack([cache[t] for t in batch]).astype(np.float32)

    return lookup


RESTATEMENT = 0.8


def _restating(group: list[int], points: Matrix, to_reference: CosineMap | None) -> list[int]:
    sims = cosines(points, points.T, to_reference)
    others = len(group) - 1
    return [g for a, g in enumerate(group)
            if others == 0 or (int((sims[a] >= RESTATEMENT).sum()) - 1) * 2 > others]  # fmt: skip


def agreeing(
    records: Sequence[MemoryRecord],
    vectors: Matrix,
    embed: EmbedFn | None,
    to_reference: CosineMap | None = None,
) -> list[int]:
    """Indexes (into `records`) of the episodes that agree with the theme's majority."""
    group = majority_polarity(records)
    facts = sum(records[i].category is Category.FACT for i in group)
    if facts * 2 > len(group):
        points = normalise_rows(np.asarray(vectors, dtype=np.float32)[group])
        return _restating(group, points, to_reference)
    group = [i for i in group if records[i].category is not Category.FACT]
    frames = [analyse(records[i].content) for i in group]
    points = normalise_rows(np.asarray(vectors, dtype=np.float32)[group])
    lookup = _batched_embed(frames, embed) if embed is not None else None
    kinds = _relations(records, group, frames, cosines(points, points.T, to_reference), lookup)
    out = []
    others = len(group) - 1
    for a, index in enumerate(group):
        against = sum(kinds(a, b) == "contradiction" for b in range(len(group)) if b != a)
        if against * 2 <= others:
            out.append(index)
    return out


def _relations(
    records: Sequence[MemoryRecord],
    group: list[int],
    frames: list[Frame],
    sims: Matrix,
    lookup: EmbedFn | None,
) -> Callable[[int, int], str]:
    """Relation of member a (as the newcomer) to member b, either way round, memoised."""
    memo: dict[tuple[int, int], str] = {}

    def kind(a: int, b: int) -> str:
        key = (min(a, b), max(a, b))
        if key not in memo:
            new, old = records[group[key[1]]], records[group[key[0]]]
            memo[key] = relate(frames[key[1]], frames[key[0]],
                               similarity=float(sims[key[0], key[1]]),
                               categories=(new.category, old.category), dup_threshold=0.92,
                               embed=lookup).kind  # fmt: skip
        return memo[key]

    return kind
