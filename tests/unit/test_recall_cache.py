"""The L1 recall cache: bytes measured, not guessed; a byte budget; oversize users refused."""

from __future__ import annotations

import asyncio
import tracemalloc
import uuid
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from memory.recall.cache import RecallCache, ScopeEntry, deep_size, measure
from memory.recall.representation import indexed_from_record
from memory.recall.retrieval import UserIndex
from memory.types import Category, MemoryKind, MemoryRecord, Origin, Scope, Source, Status

NOW = datetime(2024, 6, 1, tzinfo=UTC)
WORDS = "garden tomato basil car brake cello orchestra sushi tea passport osaka airflow".split()


def _records(n: int, seed: int = 0) -> tuple[list[MemoryRecord], np.ndarray]:
    rng = np.random.default_rng(seed)
    records, vectors = [], []
    for i in range(n):
        words = " ".join(rng.choice(WORDS, size=12))
        records.append(
            MemoryRecord(
                id=uuid.uuid4().hex,
                tenant_id="t",
                user_id="u",
                kind=MemoryKind.EPISODIC,
                content=f"note {i}: {words}",
                source=Source.CHAT,
                origin=Origin.EXPLICIT,
                category=Category.FACT,
                importance=0.5,
                confidence=0.8,
                created_at=NOW,
                occurred_at=NOW - timedelta(days=i % 90),
                expires_at=None,
                access_count=0,
                last_accessed=None,
                status=Status.ACTIVE,
                superseded_by=None,
                provenance={"speaker": "Ana", "thread_id": f"s{i // 10}"},
                content_hash=uuid.uuid4().hex * 2,
                version=1,
                indexed_at=NOW,
                context=f"the turn before note {i} talked about {words[:30]}",
            )
        )
        v = rng.standard_normal(384).astype(np.float32)
        vectors.append(v / np.linalg.norm(v))
    return records, np.vstack(vectors)


def _entry(records: list[MemoryRecord], vectors: np.ndarray) -> ScopeEntry:
    entry = ScopeEntry(version=1, index=UserIndex())
    for record, vector in zip(records, vectors, strict=True):
        entry.put(record, indexed_from_record(record, vector))
    return entry


def test_deep_size_agrees_with_the_allocator() -> None:
    """What deep_size counts is most of what building the entry allocated.

    The rest is not the entry's: caches shared by the process (stemming, time parsing) that
    building it warmed, and the allocator's free lists.
    """
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        records, vectors = _records(300)
        entry = _entry(records, vectors)
        del vectors  # the entry holds copies of each vector; the batch is not the entry's
        allocated = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    size = deep_size(entry)
    assert 0.75 * allocated <= size <= 1.05 * allocated, (size, allocated)
    assert asyncio.run(measure(entry, slice_objects=100)) == size


def test_budget_in_bytes_evicts_least_recently_used() -> None:
    entries = [_entry(*_records(20, seed=i)) for i in range(10)]
    one = max(deep_size(e) for e in entries)
    cache = RecallCache(max_bytes=int(one * 3.5), user_share=0.5)
    for i, entry in enumerate(entries):
        assert cache.put(Scope("t", f"u{i}"), entry)
        assert cache.held_bytes <= cache.max_bytes
    assert len(cache) == 3 and cache.evictions == 7
    assert cache.get(Scope("t", "u9"), 1) is entries[9]
    assert cache.peek(Scope("t", "u0")) is None  # the oldest went first
    assert cache.held_bytes == sum(e.nbytes for e in entries[7:])


def test_a_user_too_large_for_their_share_is_refused() -> None:
    small, large = _entry(*_records(5)), _entry(*_records(60, seed=1))
    cache = RecallCache(max_bytes=deep_size(small) * 8, user_share=0.25)
    assert cache.put(Scope("t", "small"), small)
    assert not cache.put(Scope("t", "large"), large)
    assert cache.peek(Scope("t", "large")) is None and cache.refused == 1
    # Learned from what was measured: a user like "large" is refused before loading.
    assert not cache.admits(60) and cache.admits(1)
    assert not RecallCache(user_max=10).admits(11)


def test_growth_in_place_counts_and_can_push_a_user_out() -> None:
    records, vectors = _records(12)
    entry = _entry(records[:5], vectors[:5])
    cache = RecallCache(max_bytes=deep_size(entry) * 4, user_share=0.5)
    assert cache.put(Scope("t", "u"), entry)
    before = cache.held_bytes
    for record, vector in zip(records[5:], vectors[5:], strict=True):
        entry.put(record, indexed_from_record(record, vector))
    cache.bump(Scope("t", "u"), 2, delta_size=7)
    assert cache.peek(Scope("t", "u")) is None  # grew past its half of the budget
    assert cache.held_bytes == 0 and before > 0


@pytest.mark.parametrize(
    "kwargs", [{"max_bytes": 0}, {"user_share": 0.0}, {"user_share": 1.5}, {"user_max": 0}]
)
def test_bad_limits_are_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        RecallCache(**kwargs)  # type: ignore[arg-type]
