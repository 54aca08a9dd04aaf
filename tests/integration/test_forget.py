"""Forget me and delete-one, proven by searching every table, Chroma and the checkpoints.

Alice talks to the real graph (Postgres checkpointer, real stores, stub model) on two threads, so
her text lands in memories, the audit log, Chroma and her threads' checkpoints. After
`forget_user` no column of any table and no Chroma document or metadata holds any of her unique
strings; Bob, who did the same, is untouched; the receipt counts what was there.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import chromadb
import pytest
from chromadb.config import Settings as ChromaSettings

from agent.checkpointer import open_checkpointer
from agent.context import Context
from agent.graph import build_graph
from agent.model import load_chat_model
from memory.settings import Settings
from memory.storage.forget import CHECKPOINT_TABLES, forget_user, scoped_tables
from memory.storage.forget_one import delete_memory
from memory.storage.store import MemoryStore, open_store
from memory.system import recaller
from memory.types import NewMemory, Scope
from tests.support.secured import files_holding
from tests.support.stub_llm import StubLLM


@pytest.fixture
def settings(pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path) -> Settings:
    return Settings(
        database_url=pg_db_url, data_dir=tmp_data_dir, embedding_model_dir=embedding_model_dir
    )


@pytest.fixture
async def store(settings: Settings) -> AsyncIterator[MemoryStore]:
    async with open_store(settings) as s:
        yield s


def _person(name: str) -> tuple[Scope, list[str]]:
    tag = uuid.uuid4().hex[:8]
    scope = Scope("acme", f"{name}-{tag}")
    return scope, [scope.user_id, f"Zorblax{tag}", f"Quintar{tag}", f"Vexmoor{tag}"]


async def _turns(
    settings: Settings, store: MemoryStore, ctx: Context, turns: list[tuple[str, str]]
) -> None:
    async with open_checkpointer(settings) as saver:
        graph = build_graph().compile(checkpointer=saver)
        for thread, text in turns:
            config = {"configurable": {"thread_id": thread, "memory_store": store}}
            await graph.ainvoke({"messages": [("user", text)]}, config, context=ctx)


async def _live_through_the_agent(
    settings: Settings, store: MemoryStore, scope: Scope, marks: list[str]
) -> list[str]:
    """Two threads of real turns, a direct write, a profile, a version row; returns threads."""
    ctx = Context(tenant_id=scope.tenant_id, user_id=scope.user_id)
    threads = [uuid.uuid4().hex, uuid.uuid4().hex]
    turns = [
        (threads[0], f"I prefer the {marks[1]} build tool for all my projects."),
        (threads[0], "Please show me how to configure it for tests."),
        (threads[1], f"Remember that my project codename is {marks[2]}."),
    ]
    await _turns(settings, store, ctx, turns)
    record = await store.write(scope, NewMemory(f"Lives near the {marks[3]} station"))
    await store.set_consent(scope, True)
    async with store.pool.acquire() as conn:
        await conn.execute(
            "UPDATE user_settings SET profile = $3::jsonb WHERE tenant_id = $1 AND user_id = $2",
            scope.tenant_id,
            scope.user_id,
            json.dumps({"nickname": marks[3]}),
        )
        # What consolidation writes when it changes a memory: the prior state as a snapshot.
        await conn.execute(
            "INSERT INTO memory_versions (memory_id, version, tenant_id, user_id, snapshot)"
            " VALUES ($1, 1, $2, $3, $4::jsonb)",
            record.id,
            scope.tenant_id,
            scope.user_id,
            json.dumps({"content": f"Lived near {marks[3]} before"}),
        )
    await store.drain()
    return threads


async def _columns(conn: Any) -> list[tuple[str, str, str, str]]:
    rows = await conn.fetch(
        "SELECT c.table_schema, c.table_name, c.column_name, c.data_type"
        " FROM information_schema.columns c JOIN information_schema.tables t"
        "   ON t.table_schema = c.table_schema AND t.table_name = c.table_name"
        " WHERE t.table_type = 'BASE TABLE'"
        "   AND c.table_schema NOT IN ('pg_catalog', 'information_schema')"
        "   AND c.data_type IN ('text', 'character varying', 'jsonb', 'json', 'ARRAY',"
        "                       'tsvector', 'bytea')"
    )
    return [(r[0], r[1], r[2], r[3]) for r in rows]


async def db_hits(store: MemoryStore, needles: list[str]) -> list[str]:
    """`schema.table.column: needle` for every column anywhere in the database holding one."""
    async with store.pool.acquire() as conn:
        return await db_hits_conn(conn, needles)


async def db_hits_conn(conn: Any, needles: list[str]) -> list[str]:
    """`db_hits` on an open asyncpg connection (the e2e tests connect to the server's DB)."""
    hits: list[str] = []
    for schema, table, column, kind in await _columns(conn):
        ref = f"{schema}.{table}.{column}"
        col = f'"{column}"'
        src = f'"{schema}"."{table}"'
        # bytea: the checkpoint blobs are msgpack, where strings are raw UTF-8 bytes.
        test = (
            f"position(convert_to($1, 'UTF8') in {col}) > 0"
            if kind == "bytea"
            else f"strpos(lower({col}::text), lower($1)) > 0"
        )
        for needle in needles:
            if await conn.fetchval(f"SELECT count(*) FROM {src} WHERE {test}", needle):
                hits.append(f"{ref}: {needle}")
    return hits


def chroma_hits(data_dir: Path, needles: list[str]) -> list[str]:
    """Every Chroma document or metadata value, in any collection, holding one of `needles`."""
    client = chromadb.PersistentClient(
        path=str(data_dir / "chroma"), settings=ChromaSettings(anonymized_telemetry=False)
    )
    hits: list[str] = []
    for collection in client.list_collections():
        got = collection.get(include=["documents", "metadatas"])
        for doc, meta in zip(got["documents"], got["metadatas"], strict=True):
            blob = f"{doc} {json.dumps(meta)}".lower()
            hits += [f"{collection.name}: {n}" for n in needles if n.lower() in blob]
    return hits


async def _counts(store: MemoryStore, scope: Scope, threads: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    async with store.pool.acquire() as conn:
        for table in await scoped_tables(conn):
            counts[f"postgres.{table}"] = await conn.fetchval(
                f'SELECT count(*) FROM "{table}" WHERE tenant_id = $1 AND user_id = $2',
                scope.tenant_id,
                scope.user_id,
            )
        for table in CHECKPOINT_TABLES:
            counts[f"checkpoints.{table}"] = await conn.fetchval(
                f'SELECT count(*) FROM "{table}" WHERE thread_id = ANY($1::text[])', threads
            )
    counts["chroma"] = await store.index.count_scope(scope)
    return counts


async def test_forget_leaves_nothing_anywhere_and_the_receipt_adds_up(
    settings: Settings, store: MemoryStore, stub_llm: StubLLM, tmp_data_dir: Path
) -> None:
    load_chat_model.cache_clear()  # the stub's URL is read when the model is built
    alice, alice_marks = _person("alice")
    bob, bob_marks = _person("bob")
    alice_threads = await _live_through_the_agent(settings, store, alice, alice_marks)
    await _live_through_the_agent(settings, store, bob, bob_marks)
    before = await _counts(store, alice, alice_threads)
    bob_before = await _counts(store, bob, [])
    # The search can see every string before the deletion, or its silence afterwards means nothing.
    found = await db_hits(store, alice_marks)
    assert {h.split(": ")[1] for h in found} == set(alice_marks)
    assert any(h.startswith("public.checkpoint_blobs.blob") for h in found)  # her turns' text
    # Chroma holds her entries (counted below) but neither her words nor her id: recall reads
    # text from Postgres, and an entry's owner is a keyed hash.
    assert chroma_hits(tmp_data_dir, alice_marks) == []
    for key in ("memories", "memory_events", "memory_versions", "user_settings", "user_threads"):
        assert before[f"postgres.{key}"] > 0, key
    assert before["checkpoints.checkpoints"] > 0 and before["checkpoints.checkpoint_blobs"] > 0
    assert before["chroma"] > 0

    receipt = await forget_user(store, alice)

    assert {k: v for k, v in receipt.counts.items() if v} == {k: v for k, v in before.items() if v}
    assert sorted(receipt.threads) == sorted(alice_threads)
    assert await db_hits(store, alice_marks) == []
    assert chroma_hits(tmp_data_dir, alice_marks) == []
    assert await store.list_memories(alice, statuses=("active", "superseded")) == []
    assert await recaller(store).recall(alice, f"{alice_marks[1]} build tool", k=5) == []
    # Bob is untouched.
    assert await _counts(store, bob, []) == bob_before
    assert {h.split(": ")[1] for h in await db_hits(store, bob_marks)} == set(bob_marks)
    again = await forget_user(store, alice)
    assert again.total == 0


async def test_delete_one_memory_removes_its_text_everywhere(
    store: MemoryStore, tmp_data_dir: Path
) -> None:
    carol, marks = _person("carol")
    keep = await store.write(carol, NewMemory(f"Carol's dentist is Dr {marks[2]}"))
    gone = await store.write(
        carol, NewMemory(f"Carol's locker code is {marks[1]}"), reason=f"stated: {marks[1]}"
    )
    # Audit rows that quote the memory (conflict notes do) must lose the quote as well.
    await store.record_event(carol, gone.id, "conflict", f"vs {marks[1]}", {"text": marks[1]})
    assert await db_hits(store, [marks[1]])
    assert {i for i, _, _ in await store.index.documents_for(carol)} == {keep.id, gone.id}

    receipt = await store.delete(carol, gone.id, reason="user asked")

    assert receipt["memories"] == 1 and receipt["chroma_entries"] == 1
    assert receipt["audit_events_redacted"] == 2
    assert await db_hits(store, [marks[1]]) == []
    assert {i for i, _, _ in await store.index.documents_for(carol)} == {keep.id}
    assert chroma_hits(tmp_data_dir, marks[1:]) == []
    assert files_holding(tmp_data_dir / "chroma", marks[1:]) == []
    assert await store.get(carol, keep.id) is not None
    assert [e["event"] for e in await store.events(carol, gone.id)][-1] == "delete"
    assert await forget_user(store, carol)  # and the rest of Carol goes too


async def _thread_rows_with(store: MemoryStore, thread: str, needle: str) -> int:
    total = 0
    async with store.pool.acquire() as conn:
        for table in ("checkpoint_blobs", "checkpoint_writes"):
            total += await conn.fetchval(
                f'SELECT count(*) FROM "{table}" WHERE thread_id = $1'
                " AND position(convert_to($2, 'UTF8') in blob) > 0",
                thread,
                needle,
            )
    return total


async def test_delete_one_memory_clears_its_recalled_copies_from_thread_state(
    settings: Settings, store: MemoryStore, stub_llm: StubLLM
) -> None:
    load_chat_model.cache_clear()
    dave, marks = _person("dave")
    ctx = Context(tenant_id=dave.tenant_id, user_id=dave.user_id)
    told, asked = uuid.uuid4().hex, uuid.uuid4().hex
    await _turns(
        settings, store, ctx, [(told, f"I prefer the {marks[1]} toolkit for every project.")]
    )
    stub_llm.reset()
    await _turns(settings, store, ctx, [(asked, "Which toolkit should I use for tests?")])
    assert marks[1] in json.dumps(stub_llm.requests())  # recalled into the other thread
    assert await _thread_rows_with(store, asked, marks[1]) > 0
    memory = next(m for m in await store.list_memories(dave) if marks[1] in m.content)

    receipt = await delete_memory(store, dave, memory.id, reason="user asked")

    assert receipt["memories"] == 1 and receipt["checkpoint_copies"] > 0
    # Where it was only recalled, nothing of it is left; the thread loads and carries on.
    assert await _thread_rows_with(store, asked, marks[1]) == 0
    stub_llm.reset()
    await _turns(settings, store, ctx, [(asked, "And for linting?")])
    assert marks[1] not in json.dumps(stub_llm.requests())
    # Where Dave said it himself, his own message stays (forget-me removes the conversation).
    assert await _thread_rows_with(store, told, marks[1]) > 0


async def test_a_thread_id_taken_over_after_deletion_is_not_the_old_owners_to_forget(
    settings: Settings, store: MemoryStore, stub_llm: StubLLM
) -> None:
    """Bob deletes his thread; Alice creates one with the same id; Bob's forget spares hers."""
    load_chat_model.cache_clear()
    bob, _ = _person("bob")
    alice, _ = _person("alice")
    thread = uuid.uuid4().hex  # a client's choice, as predictable as the client makes it

    async def turn(scope: Scope, text: str) -> None:
        ctx = Context(tenant_id=scope.tenant_id, user_id=scope.user_id)
        async with open_checkpointer(settings) as saver:
            graph = build_graph().compile(checkpointer=saver)
            config: Any = {
                "configurable": {"thread_id": thread, "memory_store": store},
                # The owner stamp the server's auth puts on every thread and its checkpoints.
                "metadata": {"owner": scope.user_id, "tenant_id": scope.tenant_id},
            }
            await graph.ainvoke({"messages": [("user", text)]}, config, context=ctx)

    async def recorded() -> set[str]:
        async with store.pool.acquire() as conn:
            rows = await conn.fetch("SELECT user_id FROM user_threads WHERE thread_id = $1", thread)
        return {r["user_id"] for r in rows}

    await turn(bob, "I prefer tabs over spaces in every project.")
    assert await recorded() == {bob.user_id}
    async with open_checkpointer(settings) as saver:
        await saver.adelete_thread(thread)  # what the server's DELETE /threads/{id} calls
    assert await recorded() == set()  # the id is free: nobody's record names it

    await turn(alice, "My sister's name is Ingrid and she lives in Oslo.")
    async with store.pool.acquire() as conn:
        # A record of Bob's left from before (an older version, or a deletion that bypassed
        # the checkpointer): it must still not make Alice's thread his.
        await conn.execute(
            "INSERT INTO user_threads (tenant_id, user_id, thread_id) VALUES ($1, $2, $3)",
            bob.tenant_id, bob.user_id, thread,
        )  # fmt: skip
        alices = await conn.fetchval(
            "SELECT count(*) FROM checkpoints WHERE thread_id = $1", thread
        )
    assert alices > 0

    receipt = await forget_user(store, bob)

    assert thread not in receipt.threads
    async with store.pool.acquire() as conn:
        left = await conn.fetchval("SELECT count(*) FROM checkpoints WHERE thread_id = $1", thread)
        buried = await conn.fetchval(
            "SELECT count(*) FROM forgotten_threads WHERE thread_id = $1", thread
        )
    assert left == alices and buried == 0
    await turn(alice, "Ingrid is visiting next week.")  # her thread still works
