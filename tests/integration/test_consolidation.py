"""Consolidation against a real PostgreSQL and a real (embedded) Chroma."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agent.cli import main as cli_main
from agent.consolidate_graph import build_graph
from memory.longterm import load_profile
from memory.longterm.consolidation import (
    ConsolidationPolicy,
    LostRun,
    OpenBatches,
    RollbackConflict,
    StepContext,
    consolidate,
    rollback,
)
from memory.settings import Settings
from memory.storage.consolidation_runs import run_rows
from memory.storage.store import MemoryStore, open_store
from memory.storage.user_locks import UserLocks
from memory.system import recaller
from memory.types import Category, MemoryKind, NewMemory, Origin, Scope, Source, Status
from tests.support.memory_stores import truncate

ALICE = Scope("acme", "alice")
BOB = Scope("acme", "bob")
NOW = datetime.now(UTC)

TS_EPISODES = [
    "I prefer TypeScript for code examples",
    "Use TypeScript when you show me code",
    "My code samples should be in TypeScript",
    "Please write the examples in TypeScript, not JavaScript",
    "I like TypeScript examples better than Python ones",
]
ONE_OFF = "I had a meeting with the design team on Tuesday"


def _settings(url: str, data_dir: Path, model_dir: Path) -> Settings:
    return Settings(database_url=url, data_dir=data_dir, embedding_model_dir=model_dir,
                    chroma_prefix="c" + data_dir.parent.name[-8:].replace("-", "_"))  # fmt: skip


@pytest.fixture
async def store(
    pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path
) -> AsyncIterator[MemoryStore]:
    async with open_store(_settings(pg_db_url, tmp_data_dir, embedding_model_dir)) as s:
        await _truncate(s)
        yield s


async def _truncate(store: MemoryStore) -> None:
    await truncate(store)


def _episode(text: str, days_ago: float, **kw: Any) -> NewMemory:
    fields: dict[str, Any] = {"category": Category.PREFERENCE, "origin": Origin.INFERRED,
                              "confidence": 0.7, "importance": 0.6, "ttl_days": 90.0}  # fmt: skip
    fields.update(kw)
    return NewMemory(text, occurred_at=NOW - timedelta(days=days_ago), **fields)


async def _seed_preference(store: MemoryStore, scope: Scope = ALICE) -> list[str]:
    items = [_episode(t, days_ago=2 + 3 * i) for i, t in enumerate(TS_EPISODES)]
    items.append(_episode(ONE_OFF, days_ago=1, category=Category.FACT))
    return [r.id for r in await store.write_many(scope, items)]


async def _rows(store: MemoryStore, scope: Scope) -> list[dict[str, Any]]:
    """Every column of every row of the user (the generated tsv excepted)."""
    async with store.pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT * FROM memories WHERE tenant_id = $1 AND user_id = $2 ORDER BY id",
            scope.tenant_id, scope.user_id,
        )  # fmt: skip
    return [{k: v for k, v in dict(r).items() if k != "tsv"} for r in rows]


async def _chroma(store: MemoryStore, scope: Scope) -> list[tuple[str, str, str]]:
    docs = await store.index.documents_for(scope)
    return sorted((i, d, json.dumps(m, sort_keys=True)) for i, d, m in docs)


async def _count(store: MemoryStore, sql: str, *args: object) -> int:
    async with store.pool.acquire() as conn:
        return int(await conn.fetchval(sql, *args))


async def test_five_episodes_become_one_preference(store: MemoryStore) -> None:
    ids = await _seed_preference(store)
    episodes, one_off = ids[:5], ids[5]
    summary = await consolidate(store, scope=ALICE)
    assert summary.counts["promoted"] == 1 and summary.errors == []
    longterm = await store.list_memories(
        ALICE, kinds=[MemoryKind.PREFERENCE, MemoryKind.PROCEDURAL]
    )
    assert len(longterm) == 1
    rule = longterm[0]
    assert rule.source is Source.CONSOLIDATION and rule.origin in (Origin.LEARNED, Origin.INFERRED)
    assert "TypeScript" in rule.content and rule.expires_at is None
    assert rule.confidence > 0.7 and set(rule.provenance["evidence"]) == set(episodes)
    for mid in episodes:
        ep = await store.get(ALICE, mid)
        assert ep is not None and ep.status is Status.SUPERSEDED and ep.superseded_by == rule.id
    kept = await store.get(ALICE, one_off)
    assert kept is not None and kept.status is Status.ACTIVE and kept.kind is MemoryKind.EPISODIC
    chroma_ids = {i for i, _, _ in await _chroma(store, ALICE)}
    assert chroma_ids == {rule.id, one_off}
    hits = await recaller(store).recall(ALICE, "which language should code examples use?", k=3)
    assert hits[0].record.id == rule.id
    assert (await load_profile(store, ALICE)).get("code_language") == "typescript"
    rows = await run_rows(store.pool, summary.run_id)
    assert [r["status"] for r in rows] == ["completed"] and rows[0]["counts"]["promoted"] == 1


async def test_one_off_and_two_day_theme_stay_episodic(store: MemoryStore) -> None:
    await store.write_many(ALICE, [
        _episode("Keep answers short please", days_ago=1.0),
        _episode("Keep your answers short", days_ago=1.01),
        _episode("Keep the answers short, please", days_ago=1.02),
        _episode(ONE_OFF, days_ago=3, category=Category.FACT),
    ])  # fmt: skip
    summary = await consolidate(store, scope=ALICE)
    assert summary.counts.get("promoted", 0) == 0 and summary.counts["kept_episodic"] == 3
    reasons = [d["reason"] for d in summary.decisions if d["action"] == "keep_episodic"]
    assert any("distinct day" in r for r in reasons)
    active = await store.list_memories(ALICE)
    assert len(active) == 4 and all(r.kind is MemoryKind.EPISODIC for r in active)


async def test_expired_memory_and_its_chroma_entry_are_gone(store: MemoryStore) -> None:
    old = await store.write(ALICE, _episode("The staging password rotates weekly", days_ago=10,
                                            category=Category.FACT, ttl_days=1.0))  # fmt: skip
    fresh = await store.write(ALICE, _episode(ONE_OFF, days_ago=1, category=Category.FACT))
    assert await store.index.count_scope(ALICE) == 2
    summary = await consolidate(store, scope=ALICE)
    assert summary.counts["expired"] == 1
    gone = await store.get(ALICE, old.id)
    assert gone is not None and gone.status is Status.EXPIRED
    assert {i for i, _, _ in await _chroma(store, ALICE)} == {fresh.id}
    assert await store.index.count_scope(ALICE) == 1
    assert old.id not in {
        h.record.id for h in await recaller(store).recall(ALICE, "staging password")
    }
    # After the rollback window the row and its history are deleted for good.
    async with store.pool.acquire() as conn:
        await conn.execute("UPDATE memories SET updated_at = now() - interval '31 days'"
                           " WHERE id = $1", old.id)  # fmt: skip
    second = await consolidate(store, scope=ALICE)
    assert second.counts["purged"] == 1 and await store.get(ALICE, old.id) is None
    assert await _count(store, "SELECT count(*) FROM memory_versions WHERE memory_id = $1",
                        old.id) == 0  # fmt: skip


async def test_decay_forgets_stale_memories_but_never_pinned(store: MemoryStore) -> None:
    common = {"category": Category.FACT, "ttl_days": None}
    stale, pinned, important = await store.write_many(ALICE, [
        _episode("We discussed the weather in Oslo", days_ago=200, importance=0.3, **common),
        _episode("The office door code is kept by Maria", days_ago=200, importance=0.3,
                 pinned=True, **common),
        _episode("My daughter is allergic to peanuts", days_ago=200, importance=0.8, **common),
    ])  # fmt: skip
    summary = await consolidate(store, scope=ALICE)
    assert summary.counts["forgotten"] == 1
    statuses = {r.id: r.status for r in [await store.get(ALICE, m.id) for m in
                                          (stale, pinned, important)] if r}  # fmt: skip
    assert statuses == {stale.id: Status.EXPIRED, pinned.id: Status.ACTIVE,
                        important.id: Status.ACTIVE}  # fmt: skip


async def _busy_user(store: MemoryStore) -> list[str]:
    """Seed a theme, an expiring memory, a stale one and two near-duplicate rules."""
    ids = await _seed_preference(store)
    more = await store.write_many(ALICE, [
        _episode("The staging password rotates weekly", days_ago=10, category=Category.FACT,
                 ttl_days=1.0),
        _episode("We discussed the weather in Oslo", days_ago=200, importance=0.3,
                 category=Category.FACT, ttl_days=None),
        NewMemory("I prefer dark mode in all my editors", kind=MemoryKind.PREFERENCE,
                  confidence=0.8, ttl_days=None, occurred_at=NOW - timedelta(days=40)),
        NewMemory("I prefer dark mode in all of my editors", kind=MemoryKind.PREFERENCE,
                  confidence=0.9, ttl_days=None, occurred_at=NOW - timedelta(days=5)),
    ])  # fmt: skip
    return ids + [m.id for m in more]


async def test_rollback_restores_the_exact_previous_state(store: MemoryStore) -> None:
    await _busy_user(store)
    await store.write_many(BOB, [_episode(t, days_ago=i + 1) for i, t in enumerate(TS_EPISODES)])
    before_rows, before_chroma = await _rows(store, ALICE), await _chroma(store, ALICE)
    bob_before = await _rows(store, BOB)
    summary = await consolidate(store, scope=ALICE)
    counts = summary.counts
    assert counts["promoted"] == 1 and counts["expired"] == 1 and counts["forgotten"] == 1
    assert counts["merged"] == 1
    assert await _rows(store, ALICE) != before_rows
    report = await rollback(store, summary.run_id)
    assert report.users == 1 and report.deleted == 1 and report.restored >= 8
    assert await _rows(store, ALICE) == before_rows
    assert await _chroma(store, ALICE) == before_chroma
    assert await _rows(store, BOB) == bob_before
    assert await _count(store, "SELECT count(*) FROM memory_versions WHERE run_id = $1",
                        summary.run_id) == 0  # fmt: skip
    rows = await run_rows(store.pool, summary.run_id)
    assert rows[0]["status"] == "rolled_back"
    again = await rollback(store, summary.run_id)
    assert again.users == 0 and again.already == [ALICE.key]


async def test_rollback_refuses_to_undo_a_later_change(store: MemoryStore) -> None:
    await _seed_preference(store)
    summary = await consolidate(store, scope=ALICE)
    rule = (await store.list_memories(ALICE, kinds=[MemoryKind.PREFERENCE]))[0]
    await store.set_status(ALICE, rule.id, Status.SUPERSEDED, reason="user corrected it")
    with pytest.raises(RollbackConflict):
        await rollback(store, summary.run_id)
    assert (await store.get(ALICE, rule.id)) is not None  # nothing was undone


async def test_dry_run_changes_nothing_but_reports(store: MemoryStore) -> None:
    await _busy_user(store)
    before = (await _rows(store, ALICE), await _chroma(store, ALICE),
              await _count(store, "SELECT count(*) FROM memory_events"))  # fmt: skip
    summary = await consolidate(store, scope=ALICE, dry_run=True)
    assert summary.dry_run and summary.counts["promoted"] == 1
    assert summary.counts["expired"] == 1 and summary.counts["merged"] == 1
    actions = {(d["step"], d["action"]) for d in summary.decisions}
    assert {("distil", "create"), ("expire", "expire"), ("merge_duplicates", "supersede"),
            ("decay_cleanup", "forget")} <= actions  # fmt: skip
    after = (await _rows(store, ALICE), await _chroma(store, ALICE),
             await _count(store, "SELECT count(*) FROM memory_events"))  # fmt: skip
    assert after == before
    assert await _count(store, "SELECT count(*) FROM consolidation_runs") == 0


async def test_a_locked_user_is_skipped_not_interleaved(store: MemoryStore) -> None:
    await _seed_preference(store)
    before = await _rows(store, ALICE)
    other_run = UserLocks(store.pool)
    assert await other_run.try_lock(ALICE)
    try:
        summary = await consolidate(store, scope=ALICE)
    finally:
        await other_run.close()
    assert summary.skipped == [ALICE.key] and summary.users == 0
    assert await _rows(store, ALICE) == before
    assert (await consolidate(store, scope=ALICE)).users == 1


async def test_interrupted_run_is_rolled_back_by_the_next(store: MemoryStore) -> None:
    await _busy_user(store)
    before_rows, before_chroma = await _rows(store, ALICE), await _chroma(store, ALICE)
    ctx = StepContext(store, ConsolidationPolicy())
    batches = OpenBatches()  # as the consolidate graph's nodes use them
    await batches.open(ctx, "crashed-run", [ALICE], now=datetime.now(UTC), dry_run=False)
    for step in ("expire", "decay_cleanup", "cluster", "distil"):
        await batches.run_step("crashed-run", step)
    # The process "dies": its connection (and the advisory lock) goes away mid-run, and the
    # batch is never closed or aborted.
    await batches.get("crashed-run").locks.close()
    assert (await run_rows(store.pool, "crashed-run"))[0]["status"] == "running"
    assert await _rows(store, ALICE) != before_rows
    summary = await consolidate(store, scope=ALICE)
    assert summary.recovered == ["crashed-run"]
    crashed = (await run_rows(store.pool, "crashed-run"))[0]
    assert crashed["status"] == "rolled_back" and crashed["rollback_reason"] == "interrupted run"
    assert summary.counts["promoted"] == 1
    await rollback(store, summary.run_id)
    assert await _rows(store, ALICE) == before_rows
    assert await _chroma(store, ALICE) == before_chroma


async def test_a_batch_left_open_is_rolled_back_when_its_registry_closes(
    store: MemoryStore,
) -> None:
    await _busy_user(store)
    before_rows, before_chroma = await _rows(store, ALICE), await _chroma(store, ALICE)
    ctx = StepContext(store, ConsolidationPolicy())
    async with OpenBatches() as batches:
        await batches.open(ctx, "left-open", [ALICE], now=datetime.now(UTC), dry_run=False)
        for step in ("expire", "decay_cleanup", "cluster", "distil"):
            await batches.run_step("left-open", step)
        assert len(batches) == 1 and await _rows(store, ALICE) != before_rows
    assert len(batches) == 0
    with pytest.raises(LostRun):
        batches.get("left-open")
    (row,) = await run_rows(store.pool, "left-open")
    assert row["status"] == "rolled_back"
    assert await _rows(store, ALICE) == before_rows
    assert await _chroma(store, ALICE) == before_chroma
    # Its lock was released and nothing is left to recover.
    summary = await consolidate(store, scope=ALICE)
    assert summary.skipped == [] and summary.recovered == [] and summary.users == 1


TEA = ["I prefer tea in the morning", "In the morning I'd rather have tea",
       "Tea is what I want in the morning", "I like a cup of tea in the morning",
       "My morning drink should be tea"]  # fmt: skip


async def test_learned_rule_supersedes_an_older_inference(store: MemoryStore) -> None:
    old = await store.write(ALICE, NewMemory(
        "I prefer coffee in the morning", kind=MemoryKind.PREFERENCE,
        category=Category.PREFERENCE, origin=Origin.INFERRED, confidence=0.6, ttl_days=None,
        occurred_at=NOW - timedelta(days=60)))  # fmt: skip
    await store.write_many(ALICE, [_episode(t, days_ago=1 + 2 * i) for i, t in enumerate(TEA)])
    summary = await consolidate(store, scope=ALICE)
    assert summary.counts.get("conflicts") == 1 and summary.counts["promoted"] == 1
    (rule,) = await store.list_memories(ALICE, kinds=[MemoryKind.PREFERENCE])
    assert "tea" in rule.content.lower() and rule.origin is Origin.LEARNED
    loser = await store.get(ALICE, old.id)
    assert loser is not None and loser.status is Status.SUPERSEDED
    assert loser.superseded_by == rule.id
    events = await store.events(ALICE, old.id)
    assert any(e["event"] == "consolidate_supersede" and "conflict" in e["reason"]
               for e in events)  # fmt: skip


async def test_a_contradicting_episode_is_left_out_of_the_rule(store: MemoryStore) -> None:
    items = [_episode(t, days_ago=3 + 2 * i) for i, t in enumerate(TEA[:4])]
    items.append(_episode("I prefer coffee in the morning", days_ago=20))
    ids = [r.id for r in await store.write_many(ALICE, items)]
    summary = await consolidate(store, scope=ALICE)
    assert summary.counts["promoted"] == 1
    coffee = await store.get(ALICE, ids[-1])
    assert coffee is not None and coffee.status is Status.ACTIVE  # stays episodic evidence


async def test_all_users_in_batches(store: MemoryStore) -> None:
    users = [Scope("acme", f"u{i}") for i in range(5)]
    for scope in users:
        await _seed_preference(store, scope)
    seen: list[int] = []
    summary = await consolidate(store, tenant="acme", batch_size=2, on_batch=seen.append)
    assert seen == [2, 2, 1] and summary.users == 5 and summary.counts["promoted"] == 5
    assert len(await run_rows(store.pool, summary.run_id)) == 5


async def test_profile_is_cached_and_follows_changes(store: MemoryStore) -> None:
    chinese = NewMemory("Please always reply in Chinese", kind=MemoryKind.PREFERENCE, ttl_days=None)
    rule = await store.write(ALICE, chinese)
    first = await load_profile(store, ALICE)
    assert first.get("language") == "zh-CN" and first.fields["language"].memory_id == rule.id
    assert await load_profile(store, ALICE) is first  # unchanged memories: served from cache
    await store.write(ALICE, NewMemory("I like concise answers", kind=MemoryKind.PREFERENCE,
                                       ttl_days=None))  # fmt: skip
    second = await load_profile(store, ALICE)
    assert second is not first and second.get("verbosity") == "concise"
    await store.set_status(ALICE, rule.id, Status.SUPERSEDED, reason="changed")
    assert (await load_profile(store, ALICE)).get("language") is None
    async with store.pool.acquire() as conn:
        stored = json.loads(await conn.fetchval(
            "SELECT profile FROM user_settings WHERE tenant_id = $1 AND user_id = $2",
            ALICE.tenant_id, ALICE.user_id))  # fmt: skip
    assert stored["fields"] == {"verbosity": {"value": "concise", "memory_id": ANY_ID,
                                              "confidence": 0.7, "origin": "explicit"}}  # fmt: skip


class _AnyId(str):
    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and len(other) == 32


ANY_ID = _AnyId()


async def test_the_graph_runs_every_step_in_batches(store: MemoryStore) -> None:
    for user in ("u1", "u2", "u3"):
        await _seed_preference(store, Scope("acme", user))
    config: Any = {"configurable": {"memory_store": store}, "recursion_limit": 200}
    graph = build_graph().compile()
    nodes: list[str] = []
    async for update in graph.astream({"all": True, "tenant_id": "acme", "batch_size": 2},
                                      config, stream_mode="updates"):  # fmt: skip
        nodes += list(update)
    assert nodes[:8] == ["begin", "expire", "decay_cleanup", "cluster", "distil",
                         "merge_duplicates", "resolve_conflicts", "finish"]  # fmt: skip
    assert nodes.count("finish") == 2 and nodes[-1] == "begin"
    out = await graph.ainvoke({"user_id": "u1", "tenant_id": "acme", "dry_run": True}, config)
    assert out["users"] == 1 and out["dry_run"] and out["counts"].get("promoted", 0) == 0
    rows = await run_rows(store.pool, out["run_id"])
    assert rows == []  # a dry run leaves no trace


def test_cli_consolidate_dry_run_then_run_then_rollback(
    pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    settings = _settings(pg_db_url, tmp_data_dir, embedding_model_dir)
    monkeypatch.setenv("DATABASE_URL", pg_db_url)
    monkeypatch.setenv("MEMORY_CHROMA_PREFIX", settings.chroma_prefix)

    async def seed() -> list[dict[str, Any]]:
        async with open_store(settings) as s:
            await _truncate(s)
            await _seed_preference(s)
            return await _rows(s, ALICE)

    async def rows() -> list[dict[str, Any]]:
        async with open_store(settings) as s:
            return await _rows(s, ALICE)

    before = asyncio.run(seed())
    base = ["consolidate", "--user", "alice", "--tenant", "acme", "--json"]
    assert cli_main([*base, "--dry-run"]) == 0
    dry = json.loads(capsys.readouterr().out)
    assert dry["dry_run"] and dry["counts"]["promoted"] == 1 and asyncio.run(rows()) == before
    assert cli_main(base) == 0
    done = json.loads(capsys.readouterr().out)
    assert done["counts"]["promoted"] == 1 and asyncio.run(rows()) != before
    assert cli_main(["rollback", done["run_id"]]) == 0
    assert "rolled back run" in capsys.readouterr().out and asyncio.run(rows()) == before
    assert cli_main(["consolidate", "--all", "--user", "alice"]) == 2
