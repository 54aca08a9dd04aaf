"""Forget-me's maintenance (VACUUM, CHECKPOINT, Chroma's file) is skipped or coalesced.

Real Postgres and embedded Chroma. Every `POST /memory/forget` used to VACUUM ~14 tables, run a
CHECKPOINT and rewrite Chroma's SQLite file, even for a user with nothing left, and nothing
limits deletions: a few loops of empty forgets loaded the whole server. A forget that removed
nothing now asks for no maintenance, and passes are coalesced to one per interval; the rows
themselves are gone at once either way. Manual VACUUMs are counted by Postgres itself
(`pg_stat_user_tables.vacuum_count`; autovacuum has its own counter).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memory.storage.forget import forget_user
from memory.storage.store import MemoryStore, open_store
from memory.types import NewMemory, Scope
from tests.support.memory_stores import store_settings, truncate


@pytest.fixture
async def store(
    pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path
) -> AsyncIterator[MemoryStore]:
    async with open_store(store_settings(pg_db_url, tmp_data_dir, embedding_model_dir)) as s:
        await truncate(s)
        yield s


async def _vacuums(store: MemoryStore, table: str = "memories") -> int:
    async with store.pool.acquire() as conn:
        count = await conn.fetchval(
            "SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = $1", table
        )
    return int(count or 0)


async def _settled(store: MemoryStore, expected: int, table: str = "memories") -> int:
    """The table's VACUUM count, polled briefly until it reaches `expected`."""
    for _ in range(20):
        seen = await _vacuums(store, table)
        if seen >= expected:
            return seen
        await asyncio.sleep(0.1)
    return await _vacuums(store, table)


async def _rows(store: MemoryStore, scope: Scope) -> int:
    async with store.pool.acquire() as conn:
        n = await conn.fetchval(
            "SELECT count(*) FROM memories WHERE tenant_id = $1 AND user_id = $2",
            scope.tenant_id,
            scope.user_id,
        )
    return int(n)


async def test_a_forget_that_removed_nothing_runs_no_maintenance(store: MemoryStore) -> None:
    nobody = Scope("acme", "nobody-here")
    before = {t: await _vacuums(store, t) for t in ("memories", "memory_events")}
    # What a loop of forgets with nothing left did: VACUUM, CHECKPOINT, Chroma's file, each time.
    receipts = [(await forget_user(store, nobody)).as_dict() for _ in range(5)]
    await asyncio.sleep(0.5)
    assert {t: await _vacuums(store, t) for t in before} == before
    for receipt in receipts:
        assert receipt["total"] == 0
        assert receipt["compaction"] == "none"
        assert receipt["vacuumed"] == [] and receipt["checkpointed"] is False
    assert not store.compaction.owed


async def test_forgets_are_deleted_at_once_and_compacted_once_per_interval(
    store: MemoryStore,
) -> None:
    store.compaction.interval_s = 1.5
    people = [Scope("acme", f"compacted-{i}") for i in range(3)]
    for who in people:
        await store.write(who, NewMemory(content=f"I keep bees in {who.user_id}'s garden."))
    start = await _vacuums(store)

    first = (await forget_user(store, people[0])).as_dict()
    assert first["compaction"] == "done" and "memories" in first["vacuumed"]
    assert await _settled(store, start + 1) == start + 1

    later = [(await forget_user(store, who)).as_dict() for who in people[1:]]
    for receipt in later:
        assert receipt["counts"]["postgres.memories"] == 1
        assert receipt["compaction"] == "deferred" and receipt["compaction_within_s"] == 1.5
        assert receipt["vacuumed"] == []
    for who in people:
        assert await _rows(store, who) == 0  # the rows went at once; only the VACUUM waits
    assert await _vacuums(store) == start + 1  # no pass of their own

    # One pass for both, at the interval's end.
    assert await _settled(store, start + 2) == start + 2
    await asyncio.sleep(2.0)
    assert await _vacuums(store) == start + 2
    assert not store.compaction.owed


async def test_a_pass_still_owed_runs_when_the_store_closes(
    pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path
) -> None:
    settings = store_settings(pg_db_url, tmp_data_dir, embedding_model_dir)
    async with open_store(settings) as store:
        await truncate(store)
        store.compaction.interval_s = 3600.0
        people = [Scope("acme", f"closing-{i}") for i in range(2)]
        for who in people:
            await store.write(who, NewMemory(content="I grow tomatoes on the balcony."))
        start = await _vacuums(store)
        assert (await forget_user(store, people[0])).compaction == "done"
        assert await _settled(store, start + 1) == start + 1
        assert (await forget_user(store, people[1])).compaction == "deferred"
        assert store.compaction.owed
        closed = store
    assert not closed.compaction.owed
    async with open_store(settings) as reopened:
        assert await _settled(reopened, start + 2) == start + 2
