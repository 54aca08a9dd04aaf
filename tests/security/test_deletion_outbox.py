"""Deleting a memory while Chroma is down is owed, not lost: queued, reported, retried.

Real Postgres and a real `chroma run` server, stopped mid-test. The receipt says the index
entry is pending (the HTTP route answers 202, not 200); once Chroma answers again, the next
write, a `reindex` or a fresh start-up deletes it. No memory's text ever reaches the server's
files: an entry is an id, a vector and its owner.
"""

from __future__ import annotations

import uuid

import pytest

from memory.settings import Settings
from memory.storage.forget_one import delete_memory
from memory.storage.store import MemoryStore, open_store
from memory.types import MemoryKind, NewMemory, Scope
from tests.support.chroma_server import ChromaServer
from tests.support.secured import files_holding

USER = Scope("acme", "dora")


async def _chroma_ids(store: MemoryStore) -> set[str]:
    return {mid for mid, _, _ in await store.index.documents_for(USER)}


@pytest.mark.parametrize("retry_by", ["write", "reindex", "restart"])
async def test_a_deletion_chroma_missed_is_retried_when_it_returns(
    readable_settings: Settings, chroma_server: ChromaServer, retry_by: str
) -> None:
    marks = [f"Quokkafern{uuid.uuid4().hex[:8]}" for _ in range(3)]
    async with open_store(readable_settings) as store:
        records = [
            await store.write(USER, NewMemory(f"I keep my bike at {m}", MemoryKind.EPISODIC))
            for m in marks
        ]
        doomed = records[:2]
        chroma_server.stop()
        for record in doomed:
            receipt = await delete_memory(store, USER, record.id, reason="test")
            # Gone from the record, but not reported as gone from the index.
            assert receipt["memories"] == 1
            assert receipt["chroma_entries"] == 0 and receipt["chroma_pending"] == 1
        async with store.pool.acquire() as conn:
            owed = await conn.fetch("SELECT item, attempts FROM deletion_outbox")
        assert {r["item"] for r in owed} == {r.id for r in doomed}
        chroma_server.start()
        if retry_by == "write":
            await store.write(USER, NewMemory("I water the ferns on Sundays", MemoryKind.EPISODIC))
        elif retry_by == "reindex":
            await store.reindex()
    async with open_store(readable_settings) as store:  # "restart": the start-up retries
        ids = await _chroma_ids(store)
        assert not ids & {r.id for r in doomed}
        assert records[2].id in ids  # the one not deleted stays
        async with store.pool.acquire() as conn:
            assert await conn.fetchval("SELECT count(*) FROM deletion_outbox") == 0
    # Text sent to Chroma outlives its deletion there (its log, its full-text index, and its
    # vector files, written from freed server memory after a restart): none is ever sent.
    assert files_holding(chroma_server.path, marks) == []


async def test_a_deletion_while_chroma_is_up_is_done_at_once(
    readable_settings: Settings, chroma_server: ChromaServer
) -> None:
    mark = f"Wombatmint{uuid.uuid4().hex[:8]}"
    async with open_store(readable_settings) as store:
        record = await store.write(USER, NewMemory(f"my locker code word is {mark}"))
        assert record.id in await _chroma_ids(store)
        assert files_holding(chroma_server.path, [mark]) == []
        receipt = await delete_memory(store, USER, record.id, reason="test")
        assert receipt["chroma_entries"] == 1 and receipt["chroma_pending"] == 0
        assert record.id not in await _chroma_ids(store)
    assert files_holding(chroma_server.path, [mark]) == []
