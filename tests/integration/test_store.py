"""MemoryStore against a real PostgreSQL and a real Chroma (embedded and server mode)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory.settings import Settings
from memory.storage.pg import DatabaseError
from memory.storage.store import MemoryInputError, MemoryStore, open_store
from memory.system import recaller
from memory.types import MemoryKind, NewMemory, Scope, ScopeError, Status
from tests.support.chroma_server import ChromaServer
from tests.support.memory_stores import truncate

ALICE = Scope("acme", "alice")
BOB = Scope("acme", "bob")
OTHER_TENANT_ALICE = Scope("globex", "alice")


def _settings(url: str, data_dir: Path, model_dir: Path, chroma_url: str | None = None) -> Settings:
    return Settings(
        database_url=url,
        chroma_url=chroma_url,
        data_dir=data_dir,
        embedding_model_dir=model_dir,
        chroma_prefix="t" + data_dir.name[-8:].replace("-", "_"),
    )


@pytest.fixture
async def store(
    pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path
) -> AsyncIterator[MemoryStore]:
    async with open_store(_settings(pg_db_url, tmp_data_dir, embedding_model_dir)) as s:
        await truncate(s)
        yield s


async def _count(store: MemoryStore, sql: str, *args: object) -> int:
    async with store.pool.acquire() as conn:
        return int(await conn.fetchval(sql, *args))


async def test_round_trip_and_explanation(store: MemoryStore) -> None:
    rec = await store.write(ALICE, NewMemory("Alice prefers TypeScript for all code examples"))
    got = await store.get(ALICE, rec.id)
    assert got is not None and got.content == rec.content and got.indexed_at is not None
    results = await recaller(store).recall(ALICE, "which language for code examples?", k=3)
    assert [r.record.id for r in results] == [rec.id]
    assert results[0].score == pytest.approx(results[0].breakdown.total)
    assert await store.index.count_scope(ALICE) == 1
    events = await store.events(ALICE, rec.id)
    assert [e["event"] for e in events] == ["write"]


async def test_scope_is_enforced_everywhere(store: MemoryStore) -> None:
    secret = await store.write(ALICE, NewMemory("Alice's locker code is 4711"))
    await store.write(BOB, NewMemory("Bob likes green tea"))
    assert await store.get(BOB, secret.id) is None
    assert await store.get(OTHER_TENANT_ALICE, secret.id) is None
    for scope in (BOB, OTHER_TENANT_ALICE):
        found = await recaller(store).recall(scope, "locker code 4711", k=10)
        assert all(r.record.user_id == scope.user_id for r in found)
        assert secret.id not in {r.record.id for r in found}
    receipt = await store.delete(BOB, secret.id, reason="test")
    assert receipt["memories"] == 0
    assert await store.get(ALICE, secret.id) is not None
    for bad in (("", "alice"), ("acme", ""), ("acme", "*"), ("acme", "a b"), ("acme", None)):
        with pytest.raises(ScopeError):
            Scope(*bad)  # type: ignore[arg-type]


async def test_expired_memory_is_never_recalled(store: MemoryStore) -> None:
    old = datetime.now(UTC) - timedelta(days=10)
    await store.write(ALICE, NewMemory("parking spot is B12", occurred_at=old, ttl_days=1))
    live = await store.write(ALICE, NewMemory("parking permit renewed for spot B12"))
    ids = [r.record.id for r in await recaller(store).recall(ALICE, "parking spot B12", k=5)]
    assert ids == [live.id]


async def test_bad_input_stores_nothing(store: MemoryStore) -> None:
    bad_items = [
        NewMemory(""),
        NewMemory("   \n\t "),
        NewMemory("x" * 1_000_000),
        NewMemory("nul \x00 inside"),
    ]
    for item in bad_items:
        with pytest.raises(MemoryInputError):
            await store.write_many(ALICE, [NewMemory("a valid memory"), item])
    assert await _count(store, "SELECT count(*) FROM memories") == 0
    assert await _count(store, "SELECT count(*) FROM memory_events") == 0


async def test_unknown_user_gets_an_empty_result(store: MemoryStore) -> None:
    assert await recaller(store).recall(Scope("acme", "nobody"), "anything at all", k=5) == []
    assert await store.list_memories(Scope("acme", "nobody")) == []


async def test_supersede_hides_from_recall_and_links(store: MemoryStore) -> None:
    old = await store.write(ALICE, NewMemory("I prefer Python", kind=MemoryKind.PREFERENCE))
    new = await store.write(ALICE, NewMemory("I now prefer Rust", kind=MemoryKind.PREFERENCE))
    await store.set_status(
        ALICE, old.id, Status.SUPERSEDED, reason="newer explicit preference", superseded_by=new.id
    )
    ids = [r.record.id for r in await recaller(store).recall(ALICE, "preferred language", k=5)]
    assert ids == [new.id]
    kept = await store.get(ALICE, old.id)
    assert kept is not None and kept.status is Status.SUPERSEDED and kept.superseded_by == new.id


async def test_another_process_sees_writes(
    store: MemoryStore, pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path
) -> None:
    # A second store with its own cache stands in for a second process (server vs CLI).
    await store.write(ALICE, NewMemory("Alice's favourite editor is Helix"))
    settings = _settings(pg_db_url, tmp_data_dir, embedding_model_dir)
    async with open_store(replace(settings)) as other:
        assert len(await recaller(other).recall(ALICE, "favourite editor", k=5)) == 1
        await store.write(ALICE, NewMemory("Alice's second editor is Zed"))
        texts = {r.record.content for r in await recaller(other).recall(ALICE, "editor", k=5)}
        assert texts == {"Alice's favourite editor is Helix", "Alice's second editor is Zed"}


async def test_database_unreachable_is_a_clear_error(
    tmp_data_dir: Path, embedding_model_dir: Path
) -> None:
    settings = _settings("postgresql://x:y@127.0.0.1:9/nope", tmp_data_dir, embedding_model_dir)
    with pytest.raises(DatabaseError, match="Cannot connect to PostgreSQL") as info:
        async with open_store(settings):
            pass
    assert "x:y" not in str(info.value)  # the password is never echoed


async def test_chroma_server_down_during_write_loses_nothing(
    pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path, chroma_server: ChromaServer
) -> None:
    settings = _settings(pg_db_url, tmp_data_dir, embedding_model_dir, chroma_server.url)
    async with open_store(settings) as store:
        await truncate(store)
        first = await store.write(ALICE, NewMemory("indexed while Chroma is up"))
        chroma_server.stop()
        kept = await store.write(ALICE, NewMemory("written while Chroma is down"))
        row = await store.get(ALICE, kept.id)
        assert row is not None and row.indexed_at is None
        # Recall still works: it is served from Postgres (L2 ranks this small user's rows).
        assert {r.record.id for r in await recaller(store).recall(ALICE, "Chroma", k=5)} == {
            first.id,
            kept.id,
        }
        chroma_server.start()
        # The store's own probe may index it first (it watches for Chroma's return): either
        # way it is indexed once Chroma answers.
        await store.reindex()
        row = await store.get(ALICE, kept.id)
        assert row is not None and row.indexed_at is not None
        assert await store.index.count_scope(ALICE) == 2
        hits = await store.index.query(ALICE, (await store.embedder.aembed(["down"]))[0], k=5)
        assert {h[0] for h in hits} == {first.id, kept.id}
