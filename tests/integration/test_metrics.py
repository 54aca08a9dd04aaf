"""Metrics against real Postgres and embedded Chroma: the numbers match what was done."""

from __future__ import annotations

import argparse
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent.commands.stats import register, stats
from memory.observability.hit_rate import record_injection, used_memory_ids
from memory.observability.latency import RECALL_LATENCY
from memory.observability.metrics import chroma_dir_for, collect_stats, prometheus_text
from memory.settings import Settings
from memory.storage.store import MemoryStore, open_store
from memory.system import recaller
from memory.types import MemoryKind, NewMemory, Scope, Status
from tests.support.memory_stores import store_settings, truncate
from tests.support.prometheus import parse_prometheus

ALICE = Scope("acme", "alice")
GLOBEX = Scope("globex", "bob")


@pytest.fixture
def settings(pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path) -> Settings:
    return store_settings(pg_db_url, tmp_data_dir, embedding_model_dir)


@pytest.fixture
async def store(settings: Settings) -> AsyncIterator[MemoryStore]:
    async with open_store(settings) as s:
        await truncate(s)
        RECALL_LATENCY.reset()
        yield s


async def _scenario(store: MemoryStore) -> list[str]:
    texts = ["Alice likes green tea", "Alice lives in Lyon", "Alice's cat is Miso", "Gym on Monday"]
    ids = [(await store.write(ALICE, NewMemory(t))).id for t in texts]
    await store.write(ALICE, NewMemory("Alice prefers Rust", kind=MemoryKind.PREFERENCE))
    await store.write(GLOBEX, NewMemory("Bob drinks coffee"))
    for query in ("tea", "where does alice live", "pets"):
        await recaller(store).recall(ALICE, query, k=3, record_access=False)
        await store.drain()  # the first (a miss, served by L2) loads the cache in background
    await store.set_status(ALICE, ids[0], Status.SUPERSEDED, reason="test")
    await store.delete(ALICE, ids[1], reason="test")
    await store.record_event(ALICE, ids[2], "flagged", "reported wrong", {})
    answer = "Your cat Miso says hi [mem:" + ids[2][:8] + "]."
    evidence = [await store.get(ALICE, i) for i in (ids[2], ids[3])]
    used = used_memory_ids(answer, [e for e in evidence if e is not None])
    assert used == [ids[2]]
    await record_injection(store, ALICE, [ids[2], ids[3]], used)
    await record_injection(store, ALICE, [ids[3]], [])
    async with store.pool.acquire() as conn:
        await conn.execute(
            "INSERT INTO agent_events (tenant_id, agent_id, event_type) VALUES"
            " ('acme', 'a1', 'task_completed'), ('acme', 'a2', 'note'), ('globex', 'a1', 'note')"
        )
    return ids


async def test_collect_stats_matches_what_was_done(store: MemoryStore, settings: Settings) -> None:
    await _scenario(store)
    s = await collect_stats(store, tenant="acme", chroma_dir=chroma_dir_for(settings))
    assert s["memories"]["total"] == 4  # 5 written for acme, 1 deleted
    assert s["memories"]["by_status"] == {"active": 3, "superseded": 1}
    assert s["memories"]["by_kind"] == {"episodic": 3, "preference": 1}
    assert s["storage_bytes"]["postgres"]["memories"] > 0
    assert s["storage_bytes"]["chroma"] > 0
    latency = s["recall_latency_seconds"]
    assert latency["count"] == 3 and latency["sum"] > 0
    assert s["cache"]["recall"] == {"hits": 2, "misses": 1, "hit_rate": pytest.approx(2 / 3)}
    assert s["usage"] == {"turns": 2, "injected": 3, "used": 1, "hit_rate": pytest.approx(1 / 3)}
    assert s["pollution"]["stored"] == 5 and s["pollution"]["polluted"] == 3
    assert s["pollution"]["rate"] == pytest.approx(3 / 5)
    assert s["pollution"]["by_reason"] == {"superseded": 1, "deleted": 1, "flagged": 1}
    assert s["agent_events"] == {"note": 1, "task_completed": 1}
    everyone = await collect_stats(store)
    assert everyone["memories"]["total"] == 5 and everyone["pollution"]["stored"] == 6
    assert everyone["storage_bytes"]["chroma"] is None  # no folder given


async def test_prometheus_text_parses_and_agrees(store: MemoryStore, settings: Settings) -> None:
    await _scenario(store)
    families = parse_prometheus(await prometheus_text(store, settings))
    assert families["memory_count"].value(kind="episodic", status="active") == 3
    assert families["memory_count"].value(kind="episodic", status="superseded") == 1
    assert families["memory_count"].value(kind="preference", status="active") == 1
    assert families["memory_storage_bytes"].value(store="chroma", relation="all") > 0
    hist = families["memory_recall_duration_seconds"]
    assert [v for n, _, v in hist.samples if n.endswith("_count")] == [3]
    assert families["memory_cache_hits_total"].value(cache="recall") == 2
    assert families["memory_injection_hit_ratio"].value() == pytest.approx(1 / 3)
    assert families["memory_pollution_ratio"].value() == pytest.approx(3 / 6)
    assert families["memory_agent_events"].value(event_type="note") == 2


async def test_stats_command(
    store: MemoryStore,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    await _scenario(store)
    monkeypatch.setenv("DATABASE_URL", str(settings.database_url))
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["stats", "--json", "--tenant", "acme"])
    assert args.handler is stats
    assert await args.handler(args) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["memories"]["total"] == 4 and printed["tenant"] == "acme"
    assert printed["pollution"]["polluted"] == 3
    text_args = parser.parse_args(["stats"])
    assert await stats(text_args) == 0
    out = capsys.readouterr().out
    assert "memories:        5" in out and "pollution rate:  50.0% of 6" in out
    # The local model reads Chinese poorly; stats says so and what to run instead.
    assert printed["calibration"]["reads_poorly"] == ["zh"]
    assert "reads zh poorly" in out and "multilingual-e5-small" in out
