"""End to end: a LangGraph cron on a real `langgraph dev` fires the `consolidate` graph.

The repo's langgraph.json is served with auth on (a deployment's setup: crons and the
consolidate graph need a `memory:admin` token); Postgres and a Chroma server are real and shared
between this process (which seeds the memories and checks the result) and the server.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from langgraph_sdk import get_client

from agent.auth import PERMISSION_ADMIN
from agent.auth_tokens import mint_token
from agent.consolidate_graph import ConsolidateInput
from agent.schedule import create_schedule
from memory.settings import Settings
from memory.storage.store import MemoryStore, open_store
from memory.types import Category, MemoryKind, NewMemory, Origin, Scope, Source, Status
from tests.conftest import LangGraphFactory
from tests.support.chroma_server import ChromaServer

pytestmark = pytest.mark.e2e

ALICE = Scope("acme", "alice")
SECRET = "cron-test-secret-0123456789"
NOW = datetime.now(UTC)
EPISODES = [
    "I prefer TypeScript for code examples",
    "Use TypeScript when you show me code",
    "My code samples should be in TypeScript",
    "Please write the examples in TypeScript, not JavaScript",
    "I like TypeScript examples better than Python ones",
]


def _episode(text: str, days_ago: float, **kw: Any) -> NewMemory:
    category = kw.pop("category", Category.PREFERENCE)
    when = NOW - timedelta(days=days_ago)
    return NewMemory(text, category=category, origin=Origin.INFERRED, occurred_at=when, **kw)


async def _seed(store: MemoryStore) -> tuple[list[str], str]:
    episodes = await store.write_many(
        ALICE, [_episode(t, days_ago=2 + 3 * i) for i, t in enumerate(EPISODES)]
    )
    expired = await store.write(ALICE, _episode("The staging password rotates weekly",
                                                days_ago=10, category=Category.FACT,
                                                ttl_days=1.0))  # fmt: skip
    return [e.id for e in episodes], expired.id


async def _wait_for_run(url: str, timeout: float) -> dict[str, Any]:
    """Poll the ledger until the cron's run for alice has finished."""
    deadline = time.monotonic() + timeout
    conn = await asyncpg.connect(url)
    try:
        while time.monotonic() < deadline:
            row = await conn.fetchrow(
                "SELECT run_id, status, counts::text AS counts FROM consolidation_runs"
                " WHERE tenant_id = 'acme' AND user_id = 'alice' AND status <> 'running'"
            )
            if row is not None:
                return dict(row)
            await asyncio.sleep(2)
    finally:
        await conn.close()
    raise AssertionError(f"no consolidation run finished within {timeout:.0f} s")


async def test_cron_runs_consolidation_on_langgraph_dev(
    langgraph_factory: LangGraphFactory,
    pg_db_url: str,
    chroma_server: ChromaServer,
    embedding_model_dir: Path,
    tmp_path: Path,
) -> None:
    prefix = "cron" + uuid.uuid4().hex[:8]
    settings = Settings(database_url=pg_db_url, chroma_url=chroma_server.url,
                        data_dir=tmp_path / "client", embedding_model_dir=embedding_model_dir,
                        chroma_prefix=prefix)  # fmt: skip
    async with open_store(settings) as store:
        episodes, expired = await _seed(store)
    server, token, client = _admin_server(
        langgraph_factory, pg_db_url, chroma_server, embedding_model_dir, tmp_path, prefix
    )
    # The setup script's call: client.crons.create(assistant_id="consolidate", ...), every
    # minute; run twice, it replaces its cron instead of adding a second one.
    alice: ConsolidateInput = {"tenant_id": "acme", "user_id": "alice"}
    await create_schedule(server.url, schedule="* * * * *", token=token, graph_input=alice)
    again = await create_schedule(server.url, schedule="* * * * *", token=token, graph_input=alice)
    assert [c["cron_id"] for c in await client.crons.search()] == [again["cron_id"]]
    try:
        ledger = await _wait_for_run(pg_db_url, timeout=100)
    finally:
        await client.crons.delete(again["cron_id"])
    assert ledger["status"] == "completed", ledger
    counts = json.loads(ledger["counts"])
    assert (
        counts["promoted"] == 1 and counts["expired"] == 1 and counts["episodes_consolidated"] == 5
    )

    async with open_store(settings) as store:
        (rule,) = await store.list_memories(ALICE, kinds=[MemoryKind.PREFERENCE])
        assert rule.source is Source.CONSOLIDATION and "TypeScript" in rule.content
        assert rule.confidence > 0.7
        gone = await store.get(ALICE, expired)
        assert gone is not None and gone.status is Status.EXPIRED
        in_chroma = {i for i, _, _ in await store.index.documents_for(ALICE)}
        assert rule.id in in_chroma and expired not in in_chroma
        assert not in_chroma & set(episodes)


def _admin_server(
    langgraph_factory: LangGraphFactory,
    pg_db_url: str,
    chroma_server: ChromaServer,
    embedding_model_dir: Path,
    tmp_path: Path,
    prefix: str,
) -> tuple[Any, str, Any]:
    """A token-auth `langgraph dev` on the test's stores, an admin token of acme and its client."""
    server = langgraph_factory(env={
        "DATABASE_URL": pg_db_url, "CHROMA_URL": chroma_server.url,
        "MEMORY_CHROMA_PREFIX": prefix, "MEMORY_DATA_DIR": str(tmp_path / "server"),
        "MEMORY_EMBEDDING_MODEL_DIR": str(embedding_model_dir), "MEMORY_AUTH_SECRET": SECRET,
    })  # fmt: skip
    token = mint_token(Scope("acme", "ops"), SECRET, permissions=[PERMISSION_ADMIN])
    return server, token, get_client(url=server.url, headers={"Authorization": f"Bearer {token}"})


async def _wait_for_cron_run(
    client: Any, thread_id: str, timeout: float, log: Path
) -> dict[str, Any]:
    """Poll the thread's runs until one has finished; fail with the scheduler's errors."""
    deadline = time.monotonic() + timeout
    runs: list[Any] = []
    while time.monotonic() < deadline:
        runs = list(await client.runs.list(thread_id))
        done = [r for r in runs if r["status"] not in ("pending", "running")]
        if done:
            return dict(done[0])
        await asyncio.sleep(2)
    lines = log.read_text(errors="replace").splitlines()
    errors = [ln for ln in lines if "Error scheduling cron" in ln or "HTTPException" in ln][-4:]
    raise AssertionError(f"no finished cron run within {timeout:.0f} s (runs: {runs}): {errors}")


async def test_crons_with_a_context_fire_as_their_admin(
    langgraph_factory: LangGraphFactory,
    pg_db_url: str,
    chroma_server: ChromaServer,
    embedding_model_dir: Path,
    tmp_path: Path,
) -> None:
    """A cron whose payload carries a `context`, at create or by an update, still fires as the
    admin who made it.

    The auth handler carries the creator's identity and permissions in the stored
    `config.configurable`; the server's scheduler refuses a run with both a `context` and a
    non-empty `configurable` ("Cannot specify both configurable and context"). A completed run
    proves the permissions arrived too: `consolidate` refuses a caller without `memory:admin`
    inside the graph, and scopes the run to the caller's tenant.
    """
    prefix = "cronctx" + uuid.uuid4().hex[:8]
    server, _, client = _admin_server(
        langgraph_factory, pg_db_url, chroma_server, embedding_model_dir, tmp_path, prefix
    )
    # bob and carol have no memories (alice is the other test's): runs with nothing to change.
    # No tenant: the graph takes the caller's, so the ledger's tenant shows whose identity the
    # run had (a cron run without it is a bare user id, in the default tenant).
    bob: dict[str, Any] = {"user_id": "bob"}
    carol: dict[str, Any] = {"user_id": "carol"}
    created, updated = (await client.threads.create(), await client.threads.create())
    crons = [  # the SDK types these as runs: they are cron records
        dict(await client.crons.create_for_thread(
            created["thread_id"], "consolidate", schedule="* * * * *", input=bob,
            context={"batch_size": 7},
        )),
        dict(await client.crons.create_for_thread(
            updated["thread_id"], "consolidate", schedule="* * * * *", input=carol,
        )),
    ]  # fmt: skip
    await client.crons.update(str(crons[1]["cron_id"]), context={"batch_size": 5})
    try:
        runs = [
            await _wait_for_cron_run(client, t["thread_id"], timeout=100, log=server.log)
            for t in (created, updated)
        ]
    finally:
        for cron in crons:
            await client.crons.delete(str(cron["cron_id"]))
    for run, thread, batch_size in zip(runs, (created, updated), (7, 5), strict=True):
        assert run["status"] == "success", run
        assert run["kwargs"]["context"]["batch_size"] == batch_size, run["kwargs"]
        values = (await client.threads.get_state(thread["thread_id"]))["values"]
        assert isinstance(values, dict) and values.get("users") == 1, values
        assert not values.get("errors") and not values.get("skipped"), values
    # The admin's identity reached the graph (each run was scoped to the admin's tenant), and
    # with it the `memory:admin` permission: without it the runs would have failed.
    conn = await asyncpg.connect(pg_db_url)
    try:
        rows = await conn.fetch(
            "SELECT DISTINCT tenant_id, user_id FROM consolidation_runs"
            " WHERE user_id IN ('bob', 'carol')"
        )
    finally:
        await conn.close()
    assert sorted(tuple(r) for r in rows) == [("acme", "bob"), ("acme", "carol")], rows
