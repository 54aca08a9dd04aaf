"""Consolidation's pure rules: decay, clustering, distillation, near-duplicate merging."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.longterm.consolidation.agreement import is_negative
from memory.longterm.consolidation.cluster import cluster, medoid
from memory.longterm.consolidation.decay import decayed, expired, record_relevance, relevance
from memory.longterm.consolidation.distil import confidence_from, distil, distinct_days, support
from memory.longterm.consolidation.merge import merged_fields, near_duplicates
from memory.longterm.consolidation.types import ConsolidationPolicy
from memory.types import Category, MemoryKind, MemoryRecord, Origin, Source, Status

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
POLICY = ConsolidationPolicy()


def rec(content: str = "x", days_ago: float = 1.0, **kw: Any) -> MemoryRecord:
    when = NOW - timedelta(days=days_ago)
    base = MemoryRecord(
        id=kw.pop("id", content[:24]), tenant_id="t", user_id="u",
        kind=MemoryKind.EPISODIC, content=content, source=Source.CHAT, origin=Origin.INFERRED,
        category=Category.PREFERENCE, importance=0.5, confidence=0.7, created_at=when,
        occurred_at=when, expires_at=None, access_count=0, last_accessed=None,
        status=Status.ACTIVE, superseded_by=None, provenance={}, content_hash="h", version=1,
        indexed_at=when,
    )  # fmt: skip
    return replace(base, **kw)


def unit(*coords: float) -> np.ndarray:
    v = np.zeros(8, dtype=np.float32)
    v[: len(coords)] = coords
    return v / np.linalg.norm(v)


# --- decay ---------------------------------------------------------------------------------


def test_relevance_is_the_decay_formula() -> None:
    # Fresh, importance 0.5, no access: 0.6 + 0.15 = 0.75; one half-life later: 0.3 + 0.15.
    assert relevance(0, 0.5, 0, 30) == pytest.approx(0.75)
    assert relevance(30, 0.5, 0, 30) == pytest.approx(0.45)
    # The access boost is capped at 0.3 (·0.1): 100 accesses count like 6.
    assert relevance(30, 0.5, 100, 30) == pytest.approx(relevance(30, 0.5, 6, 30))
    assert relevance(30, 0.5, 6, 30) - relevance(30, 0.5, 0, 30) == pytest.approx(0.03)


def test_decay_removes_stale_unimportant_but_never_pinned() -> None:
    stale = rec("stale", days_ago=120, importance=0.5)
    fresh = rec("fresh", days_ago=60, importance=0.5)
    pinned = rec("pinned", days_ago=400, importance=0.0, pinned=True)
    vital = rec("vital", days_ago=400, importance=0.7)
    found = {r.id for r, _ in decayed([stale, fresh, pinned, vital], NOW, POLICY)}
    assert found == {"stale"}


def test_a_recent_recall_keeps_an_old_memory_relevant() -> None:
    old = rec("old", days_ago=200, importance=0.3)
    used = replace(old, last_accessed=NOW - timedelta(days=2))
    assert record_relevance(old, NOW, POLICY) < POLICY.decay_threshold
    assert record_relevance(used, NOW, POLICY) > POLICY.decay_threshold


def test_long_term_kinds_decay_slower() -> None:
    episode = rec("e", days_ago=200, importance=0.3)
    rule = replace(episode, kind=MemoryKind.PREFERENCE)
    assert record_relevance(rule, NOW, POLICY) > record_relevance(episode, NOW, POLICY)


def test_expiry_respects_ttl_and_pins() -> None:
    past = rec("past", expires_at=NOW - timedelta(hours=1))
    future = rec("future", expires_at=NOW + timedelta(hours=1))
    pinned = rec("pinned", expires_at=NOW - timedelta(days=9), pinned=True)
    assert [r.id for r in expired([past, future, pinned], NOW)] == ["past"]


# --- clustering ----------------------------------------------------------------------------


def test_cluster_groups_themes_and_drops_singletons() -> None:
    vectors = np.vstack([unit(1, 0.1), unit(1, -0.1), unit(0, 1), unit(1, 0.05), unit(0, 0, 1),
                         unit(0, 1, 0.1)])  # fmt: skip
    assert cluster(vectors, threshold=0.9) == [[0, 1, 3], [2, 5]]
    assert cluster(vectors, threshold=0.9, min_size=3) == [[0, 1, 3]]
    assert cluster(np.zeros((0, 8), dtype=np.float32), threshold=0.9) == []


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=0, max_value=10_000), st.integers(min_value=2, max_value=30))
def test_cluster_is_a_deterministic_partition(seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(3, 8))
    vectors = (centres[rng.integers(0, 3, n)] + rng.normal(scale=0.2, size=(n, 8))).astype(
        np.float32
    )
    groups = cluster(vectors, threshold=0.8)
    flat = [i for g in groups for i in g]
    assert len(flat) == len(set(flat)) and all(0 <= i < n for i in flat)
    assert groups == cluster(vectors.copy(), threshold=0.8)
    # Every merged group really is alike on average.
    unit_rows = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    for g in groups:
        sims = unit_rows[g] @ unit_rows[g].T
        assert (sims.sum() - len(g)) / (len(g) * (len(g) - 1)) >= 0.8 - 1e-5


def test_medoid_prefers_the_typical_and_then_the_newest() -> None:
    assert medoid(np.vstack([unit(0, 1), unit(1, 0.1), unit(1, 0)])) == 1
    assert medoid(np.vstack([unit(1, 0), unit(1, 0)])) == 1


# --- distillation --------------------------------------------------------------------------


def theme(n: int, *, days: int, negatives: int = 0) -> tuple[list[MemoryRecord], np.ndarray]:
    # Distinct texts of one statement: a single letter is no value to the conflict detector
    # (a number would be: "number 3" vs "number 4" refills a slot).
    texts = [f"I prefer short answers, take {chr(97 + i)}" for i in range(n - negatives)]
    texts += [f"Do not give me short answers, take {chr(97 + i)}" for i in range(negatives)]
    records = [rec(t, days_ago=(n - i) % days + 0.5 * i / n, id=f"m{i}")
               for i, t in enumerate(texts)]  # fmt: skip
    records.sort(key=lambda r: r.occurred_at)
    vectors = np.vstack([unit(1, 0.05 * i) for i in range(n)])
    return records, vectors


def test_support_and_confidence() -> None:
    assert support(3) == pytest.approx(0.646, abs=1e-3) and support(5) > support(3) > support(2)
    assert confidence_from(0.7, [0.6, 0.7]) == pytest.approx(0.91)
    assert confidence_from(0.01, [0.95]) > 0.95  # always above the strongest episode


def test_five_agreeing_episodes_over_days_are_promoted() -> None:
    records, vectors = theme(5, days=5)
    verdict = distil(records, vectors, POLICY)
    assert verdict.promote, verdict.reason
    assert verdict.kind is MemoryKind.PREFERENCE and verdict.category is Category.PREFERENCE
    assert verdict.confidence > max(r.confidence for r in records)
    assert set(verdict.evidence_ids) == {r.id for r in records}


@pytest.mark.parametrize(
    ("n", "days", "negatives", "why"),
    [(2, 2, 0, "agreeing episodes"), (5, 1, 0, "distinct day"), (5, 5, 2, "disagree")],
)
def test_weak_or_split_themes_stay_episodic(n: int, days: int, negatives: int, why: str) -> None:
    records, vectors = theme(n, days=days, negatives=negatives)
    verdict = distil(records, vectors, POLICY)
    assert not verdict.promote and why in verdict.reason


def test_one_conversation_across_midnight_is_one_day() -> None:
    midnight = datetime(2026, 3, 2, tzinfo=UTC)
    one_evening = [midnight + timedelta(minutes=m) for m in (-20, -5, 10)]
    assert len({t.date() for t in one_evening}) == 2  # what calendar dates would have said
    assert distinct_days(one_evening) == 1
    assert distinct_days([]) == 0
    assert distinct_days([midnight, midnight + timedelta(hours=23, minutes=59)]) == 1
    assert distinct_days([midnight + timedelta(days=1), midnight]) == 2  # order does not matter
    # Windows start at an episode, not at a fixed clock: 0 h, 20 h, 30 h are two days, not three.
    assert distinct_days([midnight + timedelta(hours=h) for h in (0, 20, 30)]) == 2
    records, vectors = theme(5, days=1)
    times = sorted(one_evening * 2)[:5]
    evening = [replace(r, occurred_at=t) for r, t in zip(records, times, strict=True)]
    verdict = distil(evening, vectors, POLICY)
    assert not verdict.promote and "distinct day" in verdict.reason


def test_the_newest_episode_revoking_the_theme_blocks_promotion() -> None:
    records, vectors = theme(6, days=6)
    records[-1] = replace(records[-1], content="I no longer want short answers")
    verdict = distil(records, vectors, POLICY)
    assert not verdict.promote and "newest" in verdict.reason


def test_polarity_reads_the_first_clause() -> None:
    assert is_negative("Don't use tables in answers")
    assert not is_negative("Write the examples in TypeScript, not JavaScript")
    assert is_negative("我不要表格")


# --- near-duplicate merge ------------------------------------------------------------------


def test_near_duplicates_merge_into_the_strongest() -> None:
    a = rec("dark mode everywhere", kind=MemoryKind.PREFERENCE, origin=Origin.EXPLICIT,
            confidence=0.8, access_count=2)  # fmt: skip
    b = rec("dark mode in all editors", kind=MemoryKind.PREFERENCE, confidence=0.95,
            access_count=3)  # fmt: skip
    c = rec("light breakfast", kind=MemoryKind.PREFERENCE)
    groups = near_duplicates([a, b, c], np.vstack([unit(1, 0.1), unit(1, 0.12), unit(0, 1)]),
                             threshold=0.92)  # fmt: skip
    assert len(groups) == 1 and groups[0].survivor is a  # explicit beats a higher confidence
    assert [r.id for r, _ in groups[0].absorbed] == [b.id]
    fields = merged_fields(groups[0])
    assert fields["confidence"] == 0.95 and fields["access_count"] == 5


def test_pinned_and_opposite_statements_are_never_absorbed() -> None:
    keep = rec("use tabs", kind=MemoryKind.PREFERENCE, origin=Origin.EXPLICIT, pinned=True)
    pinned_too = rec("use tabs please", kind=MemoryKind.PREFERENCE, pinned=True)
    negated = rec("don't use tabs", kind=MemoryKind.PREFERENCE)
    vectors = np.vstack([unit(1, 0), unit(1, 0.01), unit(1, 0.02)])
    assert near_duplicates([keep, pinned_too, negated], vectors, threshold=0.92) == []
    plain = rec("use tabs!", kind=MemoryKind.PREFERENCE)
    (group,) = near_duplicates([keep, plain], vectors[:2], threshold=0.92)
    assert group.survivor is keep and merged_fields(group) == {}  # a pinned rule is untouched
