"""The L1 recall cache: bytes measured, not guessed; a byte budget; oversize users refused."""

from __future__ import annotations

import asyncio
import mmap
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


def _mapped(entry: ScopeEntry) -> bool:
    """Whether the entry's vector matrix lives in an anonymous map of its own."""
    root: object = entry.index._cols.vectors
    while isinstance(root, np.ndarray) and root.base is not None:
        root = root.base
    return isinstance(root, memoryview) and isinstance(root.obj, mmap.mmap)


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
    # A large vector matrix has pages of its own (an anonymous map), which tracemalloc does
    # not see; it is the entry's all the same.
    allocated += entry.index._cols.vectors.nbytes if _mapped(entry) else 0
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


def test_a_large_vector_matrix_is_mapped_on_its_own_and_still_counted() -> None:
    """An entry's vector matrix of 128 KiB or more lives in its own anonymous map.

    So evicting the entry hands its pages back to the OS at once (the heap would keep them);
    the budget must still count them.
    """
    small, large = _entry(*_records(20)), _entry(*_records(300, seed=1))
    for entry, mapped in ((small, False), (large, True)):
        vectors = entry.index._cols.vectors
        assert _mapped(entry) is mapped
        assert deep_size(entry) > vectors.nbytes
    assert deep_size(large) - deep_size(small) > large.index._cols.vectors.nbytes


def test_without_maps_left_a_large_matrix_comes_from_the_heap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A process out of memory maps (vm.max_map_count) still loads users, from the heap."""

    def refused(*args: object, **kwargs: object) -> mmap.mmap:
        raise OSError(12, "Cannot allocate memory")

    monkeypatch.setattr(mmap, "mmap", refused)
    entry = _entry(*_records(300, seed=2))
    assert not _mapped(entry)
    assert entry.index._cols.vectors.shape[0] >= 300
    assert deep_size(entry) > entry.index._cols.vectors.nbytes
