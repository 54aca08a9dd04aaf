"""L2 at any size: stored recall features, the indexed Chinese leg, the layout on every open.

Real Postgres, a real `chroma run` server and the real embedding model; no LLM is involved.
"""

from __future__ import annotations

import argparse
import re
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

import asyncpg
import numpy as np
import pytest

from memory.recall.features import compute_features, decode, features_key
from memory.recall.recaller import Recaller
from memory.recall.representation import indexed_from_record
from memory.recall.retrieval import features_of
from memory.settings import Settings
from memory.storage.bulk import BulkMemory, copy_memories
from memory.storage.rows import new_id
from memory.storage.store import MemoryStore, cjk_owner, open_store
from memory.system import recaller
from memory.types import MemoryKind, NewMemory, Scope, ScoreBreakdown
from tests.integration.test_recall_tiers import QUERIES, TOPICS
from tests.support.chroma_server import ChromaServer
from tests.support.memory_stores import (
    server_settings,
    server_store_fixture,
    truncate,
    write_before_migration,
)
from tests.support.postgres import PostgresServer

pytestmark = pytest.mark.asyncio

MEI = Scope("features", "mei")
COUSIN = "我的表妹王小红在杭州开了一家花店"  # "My cousin Wang Xiaohong opened a flower shop"
COUSIN_QUERY = "王小红开了什么店？"  # "What shop did Wang Xiaohong open?"


_settings = partial(server_settings, prefix="feat")


store = server_store_fixture("feat")


def _cold(r: Recaller) -> None:
    r.cache.clear()
    r.preload_on_miss = False


async def _corpus(store: MemoryStore, scope: Scope, *extra: str) -> list[str]:
    texts = [t for group in TOPICS.values() for t in group] + list(extra)
    records = await store.write_many(scope, [NewMemory(t) for t in texts])
    return [r.id for r in records]


async def test_chinese_memory_with_no_dense_match_is_found_through_the_index(
    store: MemoryStore,
) -> None:
    ids = await _corpus(store, MEI, COUSIN)
    cousin = ids[-1]
    r = recaller(store)
    assert len(ids) > r.candidates  # L2 has to choose candidates
    # Chroma loses the memory (it stays marked as indexed, so no "not yet indexed" leg finds it
    # either): only the Postgres lexical leg can bring it back.
    await store.index.delete(MEI, [cousin])
    vector = (await store.embedder.aembed([COUSIN_QUERY]))[0]
    assert cousin not in {mid for mid, _ in await store.index.query(MEI, vector, k=50)}

    # Its character bigrams are in the indexed column, owned by this user only.
    found = await store.candidates(MEI, phrases=["小红"], limit=r.candidates)
    assert not found.complete and [rec.id for rec in found.records] == [cousin]
    other = await store.candidates(Scope("features", "someone-else"), phrases=["小红"])
    assert other.records == []

    _cold(r)
    recalled = await r.recall_traced(MEI, COUSIN_QUERY, k=3, record_access=False)
    assert recalled.path == "l2"
    assert recalled.hits and recalled.hits[0].record.id == cousin


async def test_cold_recall_stores_features_and_ranks_like_l1_on_mixed_text(
    pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path, chroma_server: ChromaServer
) -> None:
    # A candidate budget above the corpus: L2 ranks every row, so its ranking must be L1's
    # exactly, score for score, whether features were computed or read back from Postgres.
    settings = _settings(
        pg_db_url, tmp_data_dir, embedding_model_dir, chroma_server.url, recall_l2_candidates=64
    )
    queries = [*QUERIES, COUSIN_QUERY, "上周我在做什么？", "what did I do last week?"]
    async with open_store(settings) as store:
        await truncate(store)
        r = Recaller(store)
        # Written through a second store with no recall layer on it (as by another process
        # without one): no features are stored with the rows.
        async with open_store(settings, reindex_on_start=False) as other:
            await _corpus(other, MEI, COUSIN)
        assert len(await _without_features(store)) == len(await _all(store, MEI))
        for round_ in ("computed", "stored"):
            for query in queries:
                _cold(r)
                cold = await r.recall_traced(MEI, query, k=6, record_access=False,
                                             relevant_only=False)  # fmt: skip
                await store.drain()  # the features this recall computed are stored
                assert await r.preload(MEI) > 0
                warm = await r.recall_traced(MEI, query, k=6, record_access=False,
                                             relevant_only=False)  # fmt: skip
                assert (cold.path, warm.path) == ("l2", "l1")
                assert [h.record.id for h in cold.hits] == [h.record.id for h in warm.hits], query
                for a, b in zip(cold.hits, warm.hits, strict=True):
                    # Equal up to float32 summation order (rows arrive in another order).
                    assert a.score == pytest.approx(b.score, abs=1e-6), (round_, query)
                    assert _terms(a.breakdown) == pytest.approx(_terms(b.breakdown), abs=1e-6)
                    assert a.breakdown.relevance is not None and b.breakdown.relevance is not None
                    assert a.breakdown.relevance.passed == b.breakdown.relevance.passed
            assert await _without_features(store) == []


async def _without_features(store: MemoryStore) -> list[str]:
    """Ids of the kept rows that have no recall features stored."""
    return [r.id for _, r, key in await store.rows_with_feature_keys() if key is None]


def _terms(b: ScoreBreakdown) -> list[float]:
    return [b.similarity, b.lexical, b.recency, b.importance, b.access, b.temporal]


async def _all(store: MemoryStore, scope: Scope) -> list[str]:
    return [r.id for r in await store.list_memories(scope, limit=1000)]


async def test_rows_written_before_the_migration_are_filled(
    _pg_session: PostgresServer,
    tmp_data_dir: Path,
    embedding_model_dir: Path,
    chroma_server: ChromaServer,
) -> None:
    url = _pg_session.create_database()
    old = [(new_id(), NewMemory(COUSIN)), (new_id(), NewMemory("I repaired my bike on 3 May"))]
    # The schema as it was, with rows written then.
    await write_before_migration(url, 8, [(mid, MEI, memory) for mid, memory in old])
    settings = _settings(url, tmp_data_dir, embedding_model_dir, chroma_server.url)
    async with open_store(settings) as store:  # applies the new migration, indexes the rows
        async with store.pool.acquire() as c:
            grams = await c.fetchval("SELECT cjk_grams FROM memories WHERE id = $1", old[0][0])
            latin = await c.fetchval("SELECT cjk_grams FROM memories WHERE id = $1", old[1][0])
        owner = cjk_owner(MEI)
        assert {owner + "小红", owner + "花店", owner + "店"} <= set(grams)
        assert latin == []
        waiting = await _without_features(store)
        assert set(waiting) == {mid for mid, _ in old}
        assert await Recaller(store).backfill_features(batch=1) == 2
        assert await _without_features(store) == []
        # Features of another tokeniser (or an edited text) are computed again; current ones
        # are left alone.
        async with store.pool.acquire() as c:
            await c.execute(
                "UPDATE memories SET recall_features = jsonb_set(recall_features, '{k}',"
                " '\"older\"') WHERE id = $1",
                old[1][0],
            )
        assert await Recaller(store).backfill_features(batch=1) == 1
        keys = {r.id: k for _, r, k in await store.rows_with_feature_keys()}
        assert keys[old[1][0]] not in (None, "older")
        assert await Recaller(store).backfill_features() == 0
        found = await store.candidates(MEI, limit=10)
        assert found.complete and len(found.records) == 2
        for record, stored in zip(found.records, found.features, strict=True):
            item = indexed_from_record(record, found.vectors[0])
            key = features_key(item.text, item.context, item.occurred_at)
            assert decode(stored, key) == features_of(item)
            assert decode(stored, key) == compute_features(
                item.text, item.text, item.context, item.occurred_at
            )
            assert decode(stored, "another text's key") is None  # an edit invalidates them
    _pg_session.drop_database(url.rsplit("/", 1)[-1])


async def test_stats_moves_an_old_chroma_layout(
    pg_db_url: str,
    tmp_data_dir: Path,
    embedding_model_dir: Path,
    chroma_server: ChromaServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agent.commands.stats import stats

    one = _settings(pg_db_url, tmp_data_dir, embedding_model_dir, chroma_server.url)
    one = replace(one, chroma_shards=1)
    async with open_store(one) as store:
        await truncate(store)
        ids = await _corpus(store, MEI)
    for name, value in {
        "DATABASE_URL": pg_db_url,
        "CHROMA_URL": chroma_server.url,
        "MEMORY_DATA_DIR": str(tmp_data_dir),
        "MEMORY_EMBEDDING_MODEL_DIR": str(embedding_model_dir),
        "MEMORY_CHROMA_PREFIX": one.chroma_prefix,
        "MEMORY_CHROMA_SHARDS": "4",
    }.items():
        monkeypatch.setenv(name, value)
    assert await stats(argparse.Namespace(tenant=None, json=True)) == 0
    sharded = Settings.from_env()
    async with open_store(sharded, reindex_on_start=False, migrate_layout=False) as store:
        assert await store.index.other_layouts() == []  # stats moved it; nothing else ran
        assert await store.index.count_scope(MEI) == len(ids)
        assert await store.ensure_layout() == (0, [])  # recorded: Chroma is not asked again


async def test_a_user_who_holds_the_shard_is_searched_without_a_filter(
    pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path, chroma_server: ChromaServer
) -> None:
    settings = _settings(pg_db_url, tmp_data_dir, embedding_model_dir, chroma_server.url)
    async with open_store(replace(settings, chroma_shards=1)) as store:
        await truncate(store)
        whale, minnow = Scope("features", "whale"), Scope("features", "minnow")
        rng = np.random.default_rng(7)
        vectors = rng.standard_normal((112, 384)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        owners = [whale] * 100 + [minnow] * 12
        ids = [f"{o.user_id}-{i}" for i, o in enumerate(owners)]
        start = datetime(2025, 1, 6, tzinfo=UTC)
        items = [BulkMemory(o, mid, f"entry {i}", start + timedelta(hours=i), vectors[i])
                 for i, (o, mid) in enumerate(zip(owners, ids, strict=True))]  # fmt: skip
        await copy_memories(store.pool, items, model=store.embedder.name,
                            indexed_at=datetime.now(UTC))  # fmt: skip
        await store.index.upsert_many_users("episodic", owners, ids, vectors)
        query = vectors[3] + 0.1 * vectors[102]
        for scope, holds in ((whale, True), (minnow, False)):
            filtered = {mid for mid, _ in await store.index.query(scope, query, k=8)}
            layers = await store.index.nearest(scope, query, k=8, unfiltered=["episodic"])
            [episodic] = [n for n in layers if n.layer == "episodic"]
            # Unfiltered: the 16 nearest of the 112 entries, whoever owns them.
            assert episodic.unchecked and episodic.full and len(episodic.hits) == 16
            seen = [mid for mid, _ in episodic.hits]
            rows = await store.nearest_rows(scope, nearest=[seen], limit=8)
            kept = {r.id for r in rows.records}
            assert all(mid.startswith(scope.user_id + "-") for mid in kept)  # only their own
            if holds:
                assert kept == filtered  # the same neighbours as the filtered search
            else:
                assert len(kept) < 8  # too few of theirs among the 16: the filter is needed
        # Through the recaller: each user gets their own nearest memory first, and only theirs
        # (the minnow's recall found too few of theirs unfiltered and searched with the filter).
        r = recaller(store)
        _cold(r)
        for scope, nearest in ((whale, "whale-3"), (minnow, "minnow-102")):
            for _ in range(2):  # the second time the user is known to be large
                found = await r.recall_traced(scope, "zzz", k=8, relevant_only=False,
                                              query_vector=query)  # fmt: skip
                assert found.path == "l2"
                assert found.hits[0].record.id == nearest
                assert all(h.record.user_id == scope.user_id for h in found.hits)
        # The long-term layer, shared with another user's rules, is checked on its own: the
        # whale's episodic hits filling the budget do not hide their nearest rule.
        others = Scope("features", "crowd")
        await store.write_many(
            others,
            [
                NewMemory(
                    f"Always review pull request {i} before merging", kind=MemoryKind.PROCEDURAL
                )
                for i in range(30)
            ],
        )
        [rule] = await store.write_many(
            whale,
            [
                NewMemory(
                    "Always review pull requests before " "merging", kind=MemoryKind.PROCEDURAL
                )
            ],
        )
        vector = (await store.embedder.aembed(["review pull requests before merging"]))[0]
        found = await r.recall_traced(whale, "zzz", k=8, relevant_only=False, query_vector=vector)
        assert found.hits[0].record.id == rule.id
        assert all(h.record.user_id == "whale" for h in found.hits)


async def test_gin_pending_lists_are_kept_small(store: MemoryStore) -> None:
    # A full default pending list (4 MB) is read whole by every lexical lookup.
    async with store.pool.acquire() as conn:
        options = {
            r["relname"]: r["reloptions"]
            for r in await conn.fetch(
                "SELECT relname, reloptions FROM pg_class"
                " WHERE relname IN ('memories_own_tsv', 'memories_cjk_grams')"
            )
        }
    assert options == {
        "memories_own_tsv": ["gin_pending_list_limit=64"],
        "memories_cjk_grams": ["gin_pending_list_limit=64"],
    }


_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff]+")


def _grams(owner: str, body: str) -> set[str]:
    """What `cjk_grams` should hold: each CJK run's characters and adjacent pairs."""
    found: set[str] = set()
    for run in _CJK_RUN.findall(body):
        found.update(run)
        found.update(run[i : i + 2] for i in range(len(run) - 1))
    return {owner + g for g in found}


async def test_cjk_grams_are_each_runs_characters_and_pairs_in_linear_time(
    store: MemoryStore, pg_db_url: str
) -> None:
    texts = [
        "",
        "plain English",
        "中",
        "中文",
        "我喜欢喝茶。你呢？我也喜欢！",
        "ab中文cd日本語カタカナ x 中文",
    ]
    texts.append("".join("中文a。日\u3400 "[(i * 5) % 7] for i in range(300)))
    long = "".join(chr(0x4E00 + (i * 7919) % 20_000) for i in range(20_000))
    conn = await asyncpg.connect(pg_db_url)
    try:
        for text in texts:
            assert set(await conn.fetchval("SELECT lma_cjk_grams('o', $1)", text)) == _grams(
                "o", text
            )
        # A memory may hold 20,000 characters. The first version of the function found each
        # character by walking the text from its start: 3.7 s for this text on a quiet
        # machine, paid on every update of the row. Linear work takes ~30 ms.
        started = time.perf_counter()
        grams = await conn.fetchval("SELECT lma_cjk_grams('o', $1)", long)
        elapsed = time.perf_counter() - started
    finally:
        await conn.close()
    assert set(grams) == _grams("o", long) and len(grams) == 39_999
    assert elapsed < 1.0, f"{elapsed:.2f} s for 20,000 characters"
