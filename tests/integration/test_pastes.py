"""Pastes through every write path: `memory-agent remember`, a chat turn, `memory-agent import`.

Real Postgres and Chroma, the stub LLM for the chat turn. Each paste (a 900-line application
log, a traceback, JSON, a SQL dump, YAML and INI config, a code file, a CSV table, 400 repeated
lines) must leave no preference or procedural memory, at most `MAX_MEMORIES_PER_PASTE`
memories and a bounded audit trail; plain prose is kept as it was.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent.checkpointer import open_checkpointer
from agent.context import Context
from agent.graph import build_graph
from agent.model import load_chat_model
from memory.gating.ingest.pastes import MAX_AUDIT_EVENTS_PER_PASTE, MAX_MEMORIES_PER_PASTE
from memory.settings import Settings
from memory.storage.store import MemoryStore, open_store
from memory.types import MemoryKind, Scope, Status
from tests.support.cli import run_cli
from tests.support.memory_stores import truncate
from tests.support.pastes import CHINESE_PARAGRAPH, FACT_LIST, PASTES, application_log
from tests.support.stub_llm import StubLLM

TENANT = "acme"
_ALL = (Status.ACTIVE.value, Status.PENDING_APPROVAL.value)
# The events a write makes; recall's own (injection, access) are not the gate's.
_WRITE_EVENTS = frozenset(
    {"write", "gate_drop", "conflict", "supersede", "merge", "reinforce", "reject", "stored"}
)
LESSON = "This failed because the port was taken — always check the port first."


@pytest.fixture
def settings(pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path) -> Settings:
    return Settings(
        database_url=pg_db_url, data_dir=tmp_data_dir, embedding_model_dir=embedding_model_dir
    )


@pytest.fixture
async def store(settings: Settings) -> AsyncIterator[MemoryStore]:
    async with open_store(settings) as s:
        await truncate(s)
        yield s


async def _memories(store: MemoryStore, scope: Scope) -> list[Any]:
    return await store.list_memories(scope, statuses=_ALL, limit=10_000)


async def _write_events(store: MemoryStore, scope: Scope) -> list[dict[str, Any]]:
    return [e for e in await store.events(scope) if e["event"] not in ("injection", "access")]


async def _assert_one_paste(store: MemoryStore, scope: Scope, *, lesson: bool = False) -> None:
    memories = await _memories(store, scope)
    assert 1 <= len(memories) <= MAX_MEMORIES_PER_PASTE
    [account] = [m for m in memories if m.content.startswith("pasted")]
    assert account.kind is MemoryKind.EPISODIC and len(account.content) < 300
    others = [m for m in memories if m is not account]
    # Only a lesson stated in prose around the paste may be more than an episode.
    assert [m.content for m in others] == ([LESSON] if lesson else [])
    events = await _write_events(store, scope)
    assert len(events) <= MAX_AUDIT_EVENTS_PER_PASTE, [e["event"] for e in events]


# --- memory-agent remember -----------------------------------------------------------------


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(env, *args, timeout=180)


@pytest.fixture
def env(pg_db_url: str, tmp_data_dir: Path) -> dict[str, str]:
    return {**os.environ, "DATABASE_URL": pg_db_url, "MEMORY_DATA_DIR": str(tmp_data_dir)}


def _remember(env: dict[str, str], user: str, text: str) -> list[dict[str, Any]]:
    out = _cli(env, "remember", text, "--user", user, "--tenant", TENANT, "--json")
    assert out.returncode == 0, out.stderr
    results: list[dict[str, Any]] = json.loads(out.stdout)
    return results


async def test_remember_pastes_and_prose(env: dict[str, str], settings: Settings) -> None:
    # The CLI opens the embedded Chroma itself: the test's store opens it after the commands.
    run = uuid.uuid4().hex[:8]
    for name, paste in sorted(PASTES.items()):
        results = _remember(env, f"cli-{name}-{run}", paste)
        assert [r["action"] for r in results].count("stored") == 1, name
    _remember(env, f"cli-facts-{run}", FACT_LIST)
    _remember(env, f"cli-lesson-{run}", f"{LESSON}\n```\n{application_log(120)}\n```")
    async with open_store(settings) as store:
        for name in PASTES:
            await _assert_one_paste(store, Scope(TENANT, f"cli-{name}-{run}"))
        await _assert_one_paste(store, Scope(TENANT, f"cli-lesson-{run}"), lesson=True)
        stored = {m.content for m in await _memories(store, Scope(TENANT, f"cli-facts-{run}"))}
    assert stored == set(FACT_LIST.splitlines())


# --- a chat turn through the graph -----------------------------------------------------------


@pytest.fixture
def model(stub_llm: StubLLM) -> StubLLM:
    load_chat_model.cache_clear()  # the stub's URL is read when the model is built
    return stub_llm


async def _turn(graph: Any, store: MemoryStore, ctx: Context, text: str) -> Any:
    config = {"configurable": {"thread_id": uuid.uuid4().hex, "memory_store": store}}
    return await graph.ainvoke({"messages": [("user", text)]}, config, context=ctx)


async def test_chat_turns_with_pastes(
    settings: Settings, store: MemoryStore, model: StubLLM
) -> None:
    async with open_checkpointer(settings) as saver:
        graph = build_graph().compile(checkpointer=saver)
        for name, paste in sorted(PASTES.items()):
            ctx = Context(tenant_id=TENANT, user_id=f"chat-{name}")
            out = await _turn(graph, store, ctx, f"Can you look at this?\n{paste}")
            assert len(out["gate"]) <= MAX_MEMORIES_PER_PASTE + 4, name
            await _assert_one_paste(store, Scope(TENANT, ctx.user_id))
        ctx = Context(tenant_id=TENANT, user_id="chat-lesson")
        await _turn(graph, store, ctx, f"{LESSON}\n```\n{application_log(200)}\n```")
        contents = [m.content for m in await _memories(store, Scope(TENANT, "chat-lesson"))]
        assert LESSON in contents
        await _assert_one_paste(store, Scope(TENANT, "chat-lesson"), lesson=True)
        for user, prose in (("chat-facts", FACT_LIST), ("chat-zh", CHINESE_PARAGRAPH)):
            await _turn(graph, store, Context(tenant_id=TENANT, user_id=user), prose)
            memories = await _memories(store, Scope(TENANT, user))
            assert len(memories) >= 3 and not any(m.content.startswith("pasted") for m in memories)
    facts = {m.content for m in await _memories(store, Scope(TENANT, "chat-facts"))}
    assert "I'm allergic to penicillin." in facts and "I'm vegetarian." in facts


# --- memory-agent import ---------------------------------------------------------------------


async def test_import_of_a_history_with_pastes(
    env: dict[str, str], settings: Settings, tmp_path: Path
) -> None:
    rows = [{"role": "user", "content": paste} for _, paste in sorted(PASTES.items())]
    rows.append({"role": "user", "content": f"{LESSON}\n```\n{application_log(80)}\n```"})
    rows += [{"role": "user", "content": FACT_LIST}, {"role": "user", "content": CHINESE_PARAGRAPH}]
    path = tmp_path / "history.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    user = f"importer-{path.parent.name[-8:]}"
    out = _cli(env, "import", str(path), "--user", user, "--tenant", TENANT, "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["messages"] == len(rows) and report["dropped"] == 0
    scope = Scope(TENANT, f"importer-{path.parent.name[-8:]}")
    by_message: dict[int, list[Any]] = {}
    async with open_store(settings) as store:
        memories = await _memories(store, scope)
        events = await _write_events(store, scope)
    for m in memories:
        by_message.setdefault(m.provenance["import"]["index"], []).append(m)
        # A neighbouring paste is named in a memory's context, never copied into it.
        assert "req_id=" not in m.context and "INSERT INTO" not in m.context
        assert len(m.context) < 2 * len(FACT_LIST) + len(CHINESE_PARAGRAPH) + 600
    for index in range(len(PASTES)):
        [account] = by_message[index]
        assert account.kind is MemoryKind.EPISODIC and account.content.startswith("pasted")
    lesson = by_message[len(PASTES)]
    assert len(lesson) == 2 and any(m.content == LESSON for m in lesson)
    assert by_message[len(PASTES) + 1][0].content == FACT_LIST  # one memory a message, as before
    assert len(by_message[len(PASTES) + 2]) == 1
    assert len(events) <= len(rows) * MAX_MEMORIES_PER_PASTE


async def test_secrets_in_a_paste_reach_neither_postgres_nor_chroma(store: MemoryStore) -> None:
    from memory.gating.ingest import ingest_text

    key = "sk_live_51HxY2aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
    aws = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    env_file = (
        f"STRIPE_SECRET_KEY={key}\nAWS_SECRET_ACCESS_KEY={aws}\n"
        "DATABASE_URL=postgresql://admin:Blu3Heron@db.internal:5432/app\nDEBUG=false\n"
    )
    log = f"2026-03-14T09:00:00Z ERROR auth failed for token={key}\n" + application_log(30)
    scope = Scope(TENANT, "secrets")
    for text in (env_file, log, f"My staging config, keep it:\n```\n{env_file}```"):
        await ingest_text(store, scope, text, require_approval=False, explicit=True)
    async with store.pool.acquire() as conn:
        rows = await conn.fetch("SELECT content FROM memories WHERE user_id = $1", scope.user_id)
        events = await conn.fetch("SELECT * FROM memory_events WHERE user_id = $1", scope.user_id)
    assert rows, "nothing was stored: the test would prove nothing"
    documents = await store.index.documents_for(scope)
    dumped = json.dumps([dict(r) for r in rows] + [dict(e) for e in events], default=str)
    dumped += json.dumps([[d, str(m)] for _, d, m in documents])
    for secret in (key, aws, "Blu3Heron", "sk_live"):
        assert secret not in dumped, secret
