"""Writes that return before Chroma has indexed them: recalled at once, never lost.

Real Postgres, real Chroma (embedded for the store tests, the `chroma run` server for the
workers), the real embedding model; worker processes are real processes, killed with SIGKILL.
The queue's linger is set to ten minutes where a test needs index work to be still pending.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest

from memory.settings import Settings
from memory.storage.store import MemoryStore, open_store
from memory.system import recaller
from memory.types import NewMemory, Scope
from tests.support.chroma_server import ChromaServer
from tests.support.postgres import PostgresServer
from tests.support.stub_llm import StubLLM
from tests.support.worker import WorkerProcess, worker_env

TENANT = "bg"
PENDING_FOREVER_MS = 600_000


def _scope() -> Scope:
    return Scope(TENANT, "u" + uuid.uuid4().hex[:10])


@pytest.fixture
def settings(pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path) -> Settings:
    """A store on this module's database whose index queue waits ten minutes before upserting."""
    return Settings(
        database_url=pg_db_url,
        data_dir=tmp_data_dir,
        embedding_model_dir=embedding_model_dir,
        index_in_background=True,
        index_linger_ms=PENDING_FOREVER_MS,
    )


@pytest.fixture
async def store(settings: Settings) -> AsyncIterator[MemoryStore]:
    """The background-indexing store, closed (and so flushed) after the test."""
    async with open_store(settings) as opened:
        yield opened


async def _indexed_at(store: MemoryStore, memory_id: str) -> object:
    async with store.pool.acquire() as conn:
        return await conn.fetchval("SELECT indexed_at FROM memories WHERE id = $1", memory_id)


async def _in_chroma(store: MemoryStore, scope: Scope) -> set[str]:
    return {mid for mid, _, _ in await store.index.documents_for(scope)}


async def test_a_write_returns_before_chroma_and_is_recalled_meanwhile(store: MemoryStore) -> None:
    scope = _scope()
    record = await store.write(scope, NewMemory(content="My locker number at the gym is 4411."))
    assert store.indexer is not None and store.indexer.pending == 1
    assert await _indexed_at(store, record.id) is None
    assert await _in_chroma(store, scope) == set()
    # Recall from L2 (no cache entry yet) and from L1 both find the unindexed row.
    recall = recaller(store)
    recall.cache.clear()
    cold = await recall.recall(scope, "my locker number at the gym", record_access=False)
    assert [h.record.id for h in cold] == [record.id]
    await recall.preload(scope)
    warm = await recall.recall(scope, "my locker number at the gym", record_access=False)
    assert [h.record.id for h in warm] == [record.id]


async def test_pending_index_work_is_flushed_on_close(settings: Settings) -> None:
    scope = _scope()
    async with open_store(settings) as store:
        written = await store.write_many(
            scope, [NewMemory(content=f"Fact {n}: the {w} is blue.") for n, w in enumerate("ab")]
        )
        assert store.indexer is not None and store.indexer.pending == 2
    async with open_store(replace(settings, index_in_background=False)) as reopened:
        for record in written:
            assert await _indexed_at(reopened, record.id) is not None
        assert await _in_chroma(reopened, scope) == {r.id for r in written}


async def test_writes_arriving_together_share_one_upsert(settings: Settings) -> None:
    async with open_store(settings) as store:
        scopes = [_scope() for _ in range(6)]
        await asyncio.gather(
            *(
                store.write(s, NewMemory(content=f"My cat is called Tom {i}."))
                for i, s in enumerate(scopes)
            )
        )
        await store.drain()
        assert store.indexer is not None
        assert (store.indexer.indexed, store.indexer.batches) == (6, 1)
        for scope in scopes:
            assert len(await _in_chroma(store, scope)) == 1


async def test_a_memory_deleted_before_its_upsert_never_reaches_chroma(store: MemoryStore) -> None:
    scope = _scope()
    record = await store.write(scope, NewMemory(content="My passport expires in March."))
    memo = getattr(store.embedder, "memo", None)
    assert memo is not None and memo.get_all([store.embed_text(record)], count=False)[0] is not None
    receipt = await store.delete(scope, record.id, reason="test")
    assert receipt["memories"] == 1
    # The forgotten text is not kept beside its vector in the embedder's memo either.
    assert memo.get_all([store.embed_text(record)], count=False) == [None]
    await store.drain()  # the queued upsert runs now, after the deletion
    assert await _in_chroma(store, scope) == set()


async def test_a_row_deleted_while_its_upsert_runs_is_removed_again(store: MemoryStore) -> None:
    scope = _scope()
    record = await store.write(scope, NewMemory(content="My spare key is under the mat."))
    async with store.pool.acquire() as conn:  # deleted between the upsert and the mark
        await conn.execute("DELETE FROM memories WHERE id = $1", record.id)
    vectors = await store.embedder.aembed([store.embed_text(record)])
    assert await store.index_batch([record], vectors)
    assert await _in_chroma(store, scope) == set()


async def test_a_full_queue_leaves_rows_to_the_catch_up(settings: Settings) -> None:
    scope = _scope()
    async with open_store(replace(settings, index_linger_ms=1)) as store:
        assert store.indexer is not None
        store.indexer.max_pending = 1
        written = await store.write_many(
            scope, [NewMemory(content=f"Note {n} about the quarterly report.") for n in range(3)]
        )
        assert store.indexer.dropped == 3
        await store.drain()  # the worker ran the catch-up once its queue was empty
        assert await _in_chroma(store, scope) == {r.id for r in written}


async def test_access_statistics_land_in_batches_and_stay_visible(store: MemoryStore) -> None:
    scope = _scope()
    record = await store.write(scope, NewMemory(content="I drink my coffee black."))
    recall = recaller(store)
    for _ in range(3):
        hits = await recall.recall(scope, "I drink my coffee black")
        assert [h.record.id for h in hits] == [record.id]
    # Without waiting for it: the batch lands by itself within its linger.
    for _ in range(50):
        got = await store.get(scope, record.id)
        if got is not None and got.access_count == 3:
            break
        await asyncio.sleep(0.05)
    assert got is not None and got.access_count == 3 and got.last_accessed is not None
    accesses = [e for e in await store.events(scope) if e["event"] == "access"]
    assert len(accesses) == 3
    assert all(e["detail"]["ids"] == [record.id] for e in accesses)
    assert store.access_log.batches >= 1


# --- worker processes: a turn's memory before indexing, and a crash with index work pending ---


@pytest.fixture
async def slow_index_workers(
    _pg_session: PostgresServer,
    _chroma_session: ChromaServer,
    _stub_session: StubLLM,
    tmp_path: Path,
) -> AsyncIterator[list[WorkerProcess]]:
    """Two workers on a fresh database whose index queues wait ten minutes before upserting."""
    url = _pg_session.create_database()
    _chroma_session.start()
    env = worker_env(
        url, _chroma_session.url, _stub_session.base_url, tmp_path / "data",
        MEMORY_CHROMA_SERVER_PATH=str(_chroma_session.path),
        MEMORY_INDEX_LINGER_MS=str(PENDING_FOREVER_MS),
    )  # fmt: skip
    procs = [WorkerProcess(env, tmp_path / f"w{i}.log", name=f"worker{i}") for i in range(2)]
    try:
        await procs[0].start()
        await procs[1].start()
        yield procs
    finally:
        await asyncio.gather(*(p.stop() for p in procs), return_exceptions=True)
        _pg_session.drop_database(url.rsplit("/", 1)[-1])


@pytest.mark.server
async def test_a_turns_memory_is_recalled_next_turn_and_survives_a_crash_unindexed(
    slow_index_workers: list[WorkerProcess], embedding_model_dir: Path
) -> None:
    writer, reader = slow_index_workers
    scope = _scope()
    token = uuid.uuid4().hex[:8]
    wrote = await writer.turn(
        uuid.uuid4().hex, scope.tenant_id, scope.user_id,
        f"Remember that my bike lock code word is heron-{token}.",
    )  # fmt: skip
    assert "stored" in wrote["gate"], wrote
    memory_id = wrote["stored"][0]
    env = writer.env
    settings = replace(
        Settings.from_env(),
        database_url=env["DATABASE_URL"],
        chroma_url=env["CHROMA_URL"],
        chroma_prefix=env["MEMORY_CHROMA_PREFIX"],
        embedding_model_dir=embedding_model_dir,
        index_in_background=False,
    )
    async with open_store(settings, reindex_on_start=False) as look:
        assert await _indexed_at(look, memory_id) is None  # the upsert is still queued
        # The next turn, on the other worker, recalls it all the same (from Postgres).
        thread = uuid.uuid4().hex
        asked = await reader.turn(
            thread, scope.tenant_id, scope.user_id, "What is my bike lock code word?"
        )
        assert memory_id in asked["recalled"]
        await writer.kill()  # SIGKILL with the upsert queued: only Postgres has the memory
        assert await _indexed_at(look, memory_id) is None
        assert memory_id not in await _in_chroma(look, scope)
    # The next store to start (a restarted worker, the CLI) catches the index up by itself.
    async with open_store(settings) as restarted:
        assert await _indexed_at(restarted, memory_id) is not None
        assert memory_id in await _in_chroma(restarted, scope)
