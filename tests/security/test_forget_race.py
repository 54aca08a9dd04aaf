"""Forget-me is final: writers that started before a forget leave nothing after its receipt.

Real Postgres, real Chroma (embedded), the real embedding model. The forget runs on its own
connection pool (another worker's), while the writer runs on the test store's: an import in
progress, a store put, a consolidation run, a turn's writes and its checkpoints. Each race is
repeated with different timings. After the receipt no row of the user, no Chroma vector, no
checkpoint and no audit text exists; the same writers (holding the old epoch) are refused with
a clear error; a new start afterwards works.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from langgraph.checkpoint.base import empty_checkpoint

from agent.checkpointer import open_checkpointer
from memory.gating.ingest.history import Message, import_messages
from memory.governed_store import GovernedStore
from memory.longterm.consolidation.batch import OpenBatches
from memory.longterm.consolidation.types import STEPS, ConsolidationPolicy, StepContext
from memory.settings import Settings
from memory.sharing.events import SHARED_USER, channel_for
from memory.storage.agent_events import append_event
from memory.storage.deletion_outbox import owner_digest
from memory.storage.forget import forget_user, scoped_tables
from memory.storage.pg import open_pool
from memory.storage.profiles import save_profile
from memory.storage.store import MemoryStore, open_store
from memory.storage.store_keys import bind_key
from memory.storage.tombstones import (
    DERIVED_FROM,
    UserForgottenError,
    current_epoch,
    is_forgotten,
    writer,
    writing_as,
)
from memory.types import NewMemory, Scope
from tests.support.memory_stores import store_settings


@pytest.fixture
def settings(pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path) -> Settings:
    base = store_settings(pg_db_url, tmp_data_dir, embedding_model_dir)
    return replace(base, index_in_background=True)  # the indexer races the forget too


@pytest.fixture
async def store(settings: Settings) -> AsyncIterator[MemoryStore]:
    async with open_store(settings) as opened:
        yield opened


@pytest.fixture
async def other_worker(store: MemoryStore, pg_db_url: str) -> AsyncIterator[MemoryStore]:
    """The forgetting worker: its own connection pool on the same database and index."""
    async with open_pool(pg_db_url) as pool:
        yield MemoryStore(pool, store.index, store.embedder)


async def _save_profile(store: MemoryStore, scope: Scope, profile: dict[str, Any]) -> None:
    async with store.pool.acquire() as conn:
        await save_profile(conn, scope, profile)


def _caller(scope: Scope) -> Callable[[], Scope | None]:
    return lambda: scope


def _someone() -> tuple[Scope, str]:
    tag = uuid.uuid4().hex[:10]
    return Scope("acme", f"race-{tag}"), tag


async def _left_of(store: MemoryStore, scope: Scope, tag: str) -> dict[str, int]:
    """Rows of the user in every scoped table, rows anywhere holding `tag`, Chroma entries."""
    left: dict[str, int] = {}
    async with store.pool.acquire() as conn:
        for table in await scoped_tables(conn):
            n = await conn.fetchval(
                f'SELECT count(*) FROM "{table}" WHERE tenant_id = $1 AND user_id = $2',
                scope.tenant_id,
                scope.user_id,
            )
            text = await conn.fetchval(
                f'SELECT count(*) FROM "{table}" t WHERE t::text LIKE $1', f"%{tag}%"
            )
            if n or text:
                left[table] = int(n) + int(text)
        for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
            if await conn.fetchval("SELECT to_regclass($1)", table) is None:
                continue
            n = await conn.fetchval(
                f'SELECT count(*) FROM "{table}" t WHERE t::text LIKE $1'
                " OR position(convert_to($2, 'UTF8') in t::text::bytea) > 0",
                f"%{tag}%",
                tag,
            )
            if n:
                left[table] = int(n)
    await store.drain()
    if vectors := await store.index.count_scope(scope):
        left["chroma"] = vectors
    return left


def _messages(tag: str, n: int) -> list[Message]:
    return [
        Message(index=i, role="user", text=f"I prefer note {i} about the Zorvath{tag} project.")
        for i in range(n)
    ]


@pytest.mark.parametrize(("after_batches", "delay_s"), [(1, 0.0), (2, 0.005), (5, 0.02), (12, 0.0)])
async def test_forget_during_an_import_leaves_nothing_and_refuses_the_rest(
    store: MemoryStore, other_worker: MemoryStore, after_batches: int, delay_s: float
) -> None:
    scope, tag = _someone()
    seen = [0]
    started = asyncio.Event()

    def progress(n: int) -> None:
        seen[0] += 1
        if seen[0] >= after_batches:
            started.set()

    importing = asyncio.ensure_future(
        import_messages(
            store,
            scope,
            _messages(tag, 400),
            source="race",
            gated=False,
            batch_size=20,
            progress=progress,
        )  # fmt: skip
    )
    await asyncio.wait_for(started.wait(), 120)  # under way: this many batches are stored
    await asyncio.sleep(delay_s)
    receipt = await forget_user(other_worker, scope)
    with pytest.raises(Exception) as refused:
        await importing  # the batches after the forget are refused, not written
    assert isinstance(refused.value, UserForgottenError), refused.value
    assert "forgotten" in str(refused.value) and "Zorvath" not in str(refused.value)
    assert receipt.epoch >= 1
    assert await _left_of(store, scope, tag) == {}
    # A new start (a new import) works, at the new epoch.
    again = await import_messages(store, scope, _messages(tag, 3), source="race2", gated=False)
    assert again.stored == 3
    assert await current_epoch(store.pool, scope) == receipt.epoch


@pytest.mark.parametrize("rounds", [3])
async def test_every_write_path_of_a_writer_from_before_the_forget_is_refused(
    store: MemoryStore, other_worker: MemoryStore, rounds: int
) -> None:
    """By construction: whichever store method writes, a writer holding the old epoch fails."""
    for _ in range(rounds):
        scope, tag = _someone()
        first = await store.write(scope, NewMemory(content=f"I prefer Quorb{tag} tea."))
        async with writer(store.pool, scope) as epoch:
            await forget_user(other_worker, scope)
            writes: dict[str, Any] = {
                "write": store.write(scope, NewMemory(content=f"My locker is Vexil{tag}.")),
                "event": store.record_event(scope, None, "gate_drop", f"text {tag}", {"t": tag}),
                "consent": store.set_consent(scope, True),
                "thread": store.touch_thread(scope, f"thread-{tag}"),
                "profile": _save_profile(store, scope, {"note": f"Vexil{tag}"}),
                "store key": bind_key(store.pool, scope, f"key-{tag}", first.id),
            }
            written = []
            for name, pending in writes.items():
                try:
                    await pending
                except Exception as exc:
                    assert is_forgotten(exc), exc
                else:
                    written.append(name)
            assert written == []
            # The forgotten memory is gone: changing it finds nothing and writes nothing.
            assert await store.set_status(scope, first.id, first.status, reason=tag) is None
        assert epoch == 0
        assert await _left_of(store, scope, tag) == {}


@pytest.mark.parametrize("pause_at", ["apply_resolution", "_bind_key"])
async def test_a_store_put_in_flight_is_refused_and_leaves_nothing(
    store: MemoryStore,
    other_worker: MemoryStore,
    monkeypatch: pytest.MonkeyPatch,
    pause_at: str,
) -> None:
    """A put paused before its memory write, or between that write and its key's binding."""
    import memory.governed_store as governed

    reached, release = asyncio.Event(), asyncio.Event()
    target: Any = governed if pause_at == "apply_resolution" else GovernedStore
    real = getattr(target, pause_at)

    async def paused(*args: Any, **kwargs: Any) -> Any:
        reached.set()
        await release.wait()
        return await real(*args, **kwargs)

    monkeypatch.setattr(target, pause_at, paused)
    for _ in range(2):
        reached.clear()
        release.clear()
        scope, tag = _someone()
        puts = GovernedStore(store, caller=_caller(scope))
        namespace = (scope.tenant_id, scope.user_id, "memories")
        text = f"I always prefer the window seat on the Plovik{tag} line."
        running = asyncio.ensure_future(puts.put_governed(namespace, "seat", {"content": text}))
        await asyncio.wait_for(reached.wait(), 60)
        await forget_user(other_worker, scope)  # the receipt: the put is still in flight
        release.set()
        with pytest.raises(UserForgottenError) as refused:
            await running
        assert "forgotten" in str(refused.value) and "Plovik" not in str(refused.value)
        assert await _left_of(store, scope, tag) == {}
    monkeypatch.undo()
    # A new put after the receipt is a new start.
    fresh = await puts.put_governed(namespace, "seat", {"content": text})
    assert fresh.memory_id is not None


async def test_a_session_of_puts_that_began_before_the_forget_is_refused(
    store: MemoryStore, other_worker: MemoryStore
) -> None:
    for delay_s in (0.0, 0.05, 0.2):
        scope, tag = _someone()
        puts = GovernedStore(store, caller=_caller(scope))
        namespace = (scope.tenant_id, scope.user_id, "memories")

        async def session(
            puts: GovernedStore = puts, tag: str = tag, namespace: tuple[str, ...] = namespace
        ) -> None:
            async with writer(store.pool, Scope(namespace[0], namespace[1])):
                for i in range(40):
                    text = f"I always prefer window seat {i} on the Plovik{tag} line."
                    await puts.put_governed(namespace, f"k{i}", {"content": text})

        running = asyncio.ensure_future(session())
        await asyncio.sleep(delay_s)
        await forget_user(other_worker, scope)
        with pytest.raises(UserForgottenError):
            await running
        assert await _left_of(store, scope, tag) == {}


async def test_a_consolidation_run_that_began_before_the_forget_writes_nothing(
    store: MemoryStore, other_worker: MemoryStore
) -> None:
    for when in range(3):  # forget after opening, just before distil, after all steps
        scope, tag = _someone()
        for day in range(6):  # one preference over six days: the distil step promotes it
            when_said = datetime.now(UTC) - timedelta(days=day)
            said = NewMemory(content=f"I prefer Krell{tag} coffee.", occurred_at=when_said)
            await store.write(scope, said)
        await store.drain()
        run_id = f"race-{uuid.uuid4().hex[:8]}"
        async with OpenBatches() as batches:
            ctx = StepContext(store, ConsolidationPolicy(), None)
            await batches.open(ctx, run_id, [scope], now=datetime.now(UTC), dry_run=False)
            for n, step in enumerate(STEPS):
                if n == [0, STEPS.index("distil"), len(STEPS)][when]:
                    await forget_user(other_worker, scope)
                await batches.run_step(run_id, step)
            if when == 2:
                await forget_user(other_worker, scope)
            closed = await batches.close(run_id)
        assert await _left_of(store, scope, tag) == {}
        if when < 2:  # its promotion was refused, and reported (without the user's text)
            assert closed.errors and "forgotten" in closed.errors[0], closed.errors
            assert "Krell" not in " ".join(closed.errors)


async def test_a_turn_in_flight_cannot_write_memories_or_checkpoints_after_the_receipt(
    store: MemoryStore, other_worker: MemoryStore, settings: Settings
) -> None:
    async with open_checkpointer(replace(settings)) as saver:
        for _ in range(3):
            scope, tag = _someone()
            thread = f"t-{uuid.uuid4()}"
            config: Any = {
                "configurable": {"thread_id": thread, "checkpoint_ns": ""},
                "metadata": {"owner": scope.user_id, "tenant_id": scope.tenant_id},
            }
            checkpoint = empty_checkpoint()
            checkpoint["channel_values"] = {"messages": f"My code word is Ostrel{tag}."}
            meta: Any = {"owner": scope.user_id, "tenant_id": scope.tenant_id, "step": 0}
            saved = await saver.aput(config, checkpoint, meta, {"messages": "1"})
            epoch = await current_epoch(store.pool, scope)  # what perceive keeps in the state
            await store.touch_thread(scope, thread)
            await forget_user(other_worker, scope)
            # The turn goes on: its gate's writes and its checkpoint writes are refused.
            with writing_as(scope, epoch), pytest.raises(Exception) as refused:
                await store.write(scope, NewMemory(content=f"I prefer Ostrel{tag} maps."))
            assert is_forgotten(refused.value)
            later = empty_checkpoint()
            later["channel_values"] = {"messages": f"Also Ostrel{tag} again."}
            with pytest.raises(Exception) as dead:
                await saver.aput(saved, later, meta, {"messages": "2"})
            assert is_forgotten(dead.value), dead.value
            with pytest.raises(Exception) as dead_writes:
                await saver.aput_writes(saved, [("messages", f"Ostrel{tag}")], "task-1")
            assert is_forgotten(dead_writes.value)
            assert await _left_of(store, scope, tag) == {}
            # A new start: a new thread at the new epoch works.
            fresh: Any = {**config, "configurable": {"thread_id": f"t-{uuid.uuid4()}",
                                                "checkpoint_ns": ""}}  # fmt: skip
            await saver.aput(fresh, empty_checkpoint(), meta, {})
            new_epoch = await current_epoch(store.pool, scope)
            with writing_as(scope, new_epoch):
                await store.write(scope, NewMemory(content=f"I prefer Ostrel{tag} maps."))


async def test_every_table_with_user_rows_is_guarded(store: MemoryStore) -> None:
    async with store.pool.acquire() as conn:
        tables = set(await scoped_tables(conn))
        guarded = {
            r["relname"]
            for r in await conn.fetch(
                "SELECT c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid"
                " WHERE t.tgname = 'lma_forget_guard'"
            )
        }
    assert tables and tables <= guarded, tables - guarded


async def test_forget_vacuums_checkpoints_and_says_what_wal_and_backups_hold(
    store: MemoryStore, other_worker: MemoryStore
) -> None:
    scope, tag = _someone()
    await store.write(scope, NewMemory(content=f"I prefer Dravix{tag} pens."))
    receipt = (await forget_user(other_worker, scope)).as_dict()
    assert "memories" in receipt["vacuumed"] and "memory_events" in receipt["vacuumed"]
    async with store.pool.acquire() as conn:
        superuser = await conn.fetchval("SELECT rolsuper FROM pg_roles WHERE rolname = user")
    assert receipt["checkpointed"] is bool(superuser)
    said = " ".join(receipt["unreachable"])
    for words in ("write-ahead log", "backups", "PITR", "VACUUM FULL", "replicas"):
        assert words in said, words


async def test_a_writer_error_names_no_user_text(store: MemoryStore) -> None:
    scope, tag = _someone()
    with writing_as(scope, 0):
        await store.write(scope, NewMemory(content=f"I prefer Ulmar{tag} boots."))
    async with store.pool.acquire() as conn, conn.transaction():
        await conn.execute(
            "INSERT INTO user_epochs VALUES (lma_owner_digest($1, $2), 5, now())",
            scope.tenant_id,
            scope.user_id,
        )
    with writing_as(scope, 4), pytest.raises(asyncpg.PostgresError) as refused:
        await store.write(scope, NewMemory(content=f"I prefer Ulmar{tag} socks."))
    assert refused.value.sqlstate == "LMF01"
    assert tag not in str(refused.value) and scope.user_id not in str(refused.value)


async def test_a_copy_on_the_agents_bus_from_a_writer_before_the_forget_is_refused(
    store: MemoryStore, other_worker: MemoryStore
) -> None:
    """A turn's shared copy (the agents' memory and the bus log) names its user by digest."""
    for _ in range(3):
        scope, tag = _someone()
        shared = Scope(scope.tenant_id, SHARED_USER)
        source = {DERIVED_FROM: owner_digest(scope)}
        epoch = await current_epoch(store.pool, scope)  # the turn started here
        with writing_as(scope, epoch):
            await store.write(
                shared, NewMemory(content=f"Team uses Brisk{tag}.", provenance=source)
            )
            await forget_user(other_worker, scope)  # the copy made so far goes with the user
            late = NewMemory(content=f"Team also uses Brisk{tag} now.", provenance=source)
            with pytest.raises(Exception) as refused:
                await store.write(shared, late)
            assert is_forgotten(refused.value), refused.value
            with pytest.raises(Exception) as refused_event:
                await append_event(
                    store.pool,
                    channel_for(scope.tenant_id),
                    scope.tenant_id,
                    "agent-a",
                    "learned",
                    None,
                    json.dumps({"content": f"Brisk{tag}", **source}),
                    None,
                )
            assert is_forgotten(refused_event.value), refused_event.value
        async with store.pool.acquire() as conn:
            left = await conn.fetchval(
                "SELECT (SELECT count(*) FROM memories WHERE content LIKE $1)"
                " + (SELECT count(*) FROM agent_events WHERE data::text LIKE $1)",
                f"%Brisk{tag}%",
            )
        assert left == 0


async def test_the_forget_waits_for_an_index_upsert_in_flight_and_chroma_keeps_nothing(
    store: MemoryStore, other_worker: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The indexer sends vectors to Chroma under the owner's forget lock (shared)."""
    scope, tag = _someone()
    reached, release = asyncio.Event(), asyncio.Event()
    real = store.index.upsert

    async def slow_upsert(records: Any, vectors: Any) -> None:
        reached.set()
        await release.wait()
        await real(records, vectors)

    monkeypatch.setattr(store.index, "upsert", slow_upsert)
    await store.write(scope, NewMemory(content=f"I prefer Tarvell{tag} ink."))
    await asyncio.wait_for(reached.wait(), 60)  # the background upsert is in flight
    forgetting = asyncio.ensure_future(forget_user(other_worker, scope))
    try:
        await asyncio.sleep(1.0)
        assert not forgetting.done()  # no receipt while vectors may still reach Chroma
    finally:
        release.set()  # never leave the indexer (and the store's close) waiting
    receipt = await asyncio.wait_for(forgetting, 60)
    assert receipt.counts["chroma"] >= 1  # the forget found the entry the upsert added
    assert await store.index.count_scope(scope) == 0
    assert await _left_of(store, scope, tag) == {}
