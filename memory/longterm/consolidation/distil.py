"""Distilling a cluster of episodes into a long-term memory, by frequency and agreement rules.

A theme becomes long-term memory when enough episodes (support) over enough days say the same
thing (agreement), and the newest of them still says it (recent stable behaviour beats an
early preference). Everything else stays episodic: a one-off remark is not a preference.

support(n)  = 1 - 0.5 ** (n / 2)            n=3: 0.65, n=5: 0.82
agreement   = share · cohesion               share: episodes that agree (`agreement`);
                                             cohesion: their mean cosine to the centroid
evidence    = support · agreement
confidence  = 1 - (1 - c_max)·(1 - evidence)  (noisy-OR of the strongest episode and the
              cluster's evidence: always above every episode's own confidence)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from memory.gating.conflicts.relation import EmbedFn
from memory.longterm.consolidation.agreement import agreeing, majority_polarity
from memory.longterm.consolidation.cluster import CosineMap, Matrix, cohesion, medoid
from memory.longterm.consolidation.types import ConsolidationPolicy
from memory.types import Category, MemoryKind, MemoryRecord

_KIND_FOR = {
    Category.PREFERENCE: MemoryKind.PREFERENCE,
    Category.CONSTRAINT: MemoryKind.PREFERENCE,
    Category.FAILURE_LESSON: MemoryKind.PROCEDURAL,
    Category.DECISION: MemoryKind.PROCEDURAL,
    Category.FACT: MemoryKind.SEMANTIC,
}
_MAX_CONFIDENCE = 0.99
_DAY = timedelta(days=1)


@dataclass(frozen=True, slots=True)
class Distillation:
    """The verdict on one cluster: promote or not, as what, with which confidence, and why."""

    promote: bool
    reason: str
    content: str
    kind: MemoryKind
    category: Category
    confidence: float
    importance: float
    evidence_ids: tuple[str, ...]
    metrics: dict[str, Any] = field(default_factory=dict)
    method: str = "rules"


def support(n: int) -> float:
    """How much n agreeing episodes count for, in [0, 1)."""
    return float(1.0 - 0.5 ** (max(n, 0) / 2.0))


def distinct_days(times: Sequence[datetime]) -> int:
    """How many separate days the episodes fall on, as 24-hour windows, not calendar dates.

    Calendar dates would count one late-evening conversation that crosses midnight (in UTC or
    any other zone) as two days, and let a single session repeating itself become a
    preference. Sorted oldest first, an episode opens a new day when it is at least 24 hours
    after the first episode of the current one.
    """
    days, start = 0, None
    for t in sorted(times):
        if start is None or t - start >= _DAY:
            days, start = days + 1, t
    return days


def confidence_from(evidence: float, episode_confidences: Sequence[float]) -> float:
    """Noisy-OR of the strongest episode's confidence and the cluster's evidence."""
    strongest = max(episode_confidences, default=0.0)
    return round(min(_MAX_CONFIDENCE, 1.0 - (1.0 - strongest) * (1.0 - evidence)), 4)


def _category(records: Sequence[MemoryRecord]) -> Category:
    counts = Counter(r.category for r in records)
    # Most common; ties broken by the fixed order of _KIND_FOR (rules before facts).
    order = list(_KIND_FOR)
    return min(counts, key=lambda c: (-counts[c], order.index(c) if c in order else 99))


def distil(
    records: Sequence[MemoryRecord],
    vectors: Matrix,
    policy: ConsolidationPolicy,
    embed: EmbedFn | None = None,
    to_reference: CosineMap | None = None,
) -> Distillation:
    """Judge one cluster (records oldest first, with their vectors) by the rules.

    `to_reference` maps the embedder's cosines onto the scale the policy is written in.
    """
    # Only a theme that could be promoted pays for the contradiction check (~2 ms an episode).
    days_all = distinct_days([r.occurred_at for r in records])
    check = len(records) >= policy.min_support and days_all >= policy.min_days
    chosen = (
        agreeing(records, vectors, embed, to_reference) if check else majority_polarity(records)
    )
    if not chosen:  # everyone contradicts everyone: keep the newest as the representative
        chosen = [len(records) - 1]
    group = [records[i] for i in chosen]
    rep = chosen[medoid(np.asarray(vectors)[chosen])]
    share = len(chosen) / len(records)
    agreement = share * cohesion(np.asarray(vectors)[chosen], to_reference)
    n, days = len(group), distinct_days([r.occurred_at for r in group])
    evidence = support(n) * agreement
    category = _category(group)
    metrics = {"support": n, "days": days, "share": round(share, 3),
               "agreement": round(agreement, 3), "evidence": round(evidence, 3)}  # fmt: skip
    failures = [
        (n < policy.min_support, f"only {n} agreeing episodes (need {policy.min_support})"),
        (days < policy.min_days, f"only {days} distinct day(s) (need {policy.min_days})"),
        (share < policy.min_agreeing_share, f"episodes disagree ({share:.0%} agree)"),
        (len(records) - 1 not in chosen, "the newest episode says otherwise"),
        (evidence < policy.min_evidence, f"evidence {evidence:.2f} < {policy.min_evidence}"),
        (category is Category.NOISE, "noise"),
    ]
    why_not = [reason for failed, reason in failures if failed]
    return Distillation(
        promote=not why_not,
        reason="; ".join(why_not) or f"{n} episodes over {days} days agree",
        content=records[rep].content,
        kind=_KIND_FOR.get(category, MemoryKind.SEMANTIC),
        category=category,
        confidence=confidence_from(evidence, [r.confidence for r in group]),
        importance=round(max(r.importance for r in group), 4),
        evidence_ids=tuple(r.id for r in group),
        metrics=metrics,
    )
