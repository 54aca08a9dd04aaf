"""The recall query embedded ahead of its recall, on a real store: computed once, same answer."""

from __future__ import annotations

import asyncio

import pytest

from memory.recall.ranking import RankingWeights
from memory.storage.embedding import MEMO_MAX_CHARS
from memory.storage.store import MemoryStore
from memory.system import recaller
from memory.types import NewMemory, Scope

pytestmark = pytest.mark.asyncio

ANA = Scope("prefetch", "ana")
QUERY = "which locker did I rent at the climbing gym"


async def _seed(store: MemoryStore) -> None:
    await store.write_many(
        ANA,
        [
            NewMemory(content="I rented locker 4411 at the climbing gym"),
            NewMemory(content="My sister's wedding is in Lisbon in June"),
        ],
    )


@pytest.mark.parametrize("finished", [True, False], ids=["finished", "in-flight"])
async def test_a_prefetched_query_is_embedded_once_for_its_recall(
    clean_store: MemoryStore, finished: bool
) -> None:
    await _seed(clean_store)
    memo = clean_store.embedder.memo  # type: ignore[attr-defined]
    r = recaller(clean_store)
    before = memo.misses
    r.prefetch(QUERY)
    assert len(r._prefetching) == 1  # started, not awaited
    if finished:
        while r._prefetching:  # the recall finds it in the embedder's memo
            await asyncio.sleep(0.005)
        assert memo.misses == before + 1  # the prefetch computed it
    found = await r.recall_turn(ANA, QUERY, k=5, weights=RankingWeights())
    assert memo.misses == before + 1  # the recall joined or reused the prefetch
    assert found.hits and "4411" in found.hits[0].record.content


async def test_prefetch_skips_what_it_cannot_save(clean_store: MemoryStore) -> None:
    memo = clean_store.embedder.memo  # type: ignore[attr-defined]
    r = recaller(clean_store)
    before = memo.misses
    r.prefetch("   ")
    r.prefetch("x" * (MEMO_MAX_CHARS + 1))  # the memo would not keep it: recall recomputes
    r.prefetch_queries = False
    r.prefetch(QUERY)
    assert not r._prefetching
    await asyncio.sleep(0.05)
    assert memo.misses == before
