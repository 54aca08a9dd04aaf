"""Two recall tiers, one ranking, against real Postgres, a real `chroma run` and the real model.

L1 is the in-process cache; L2 answers for users not in it (cold) or too large for it, from
Chroma's nearest memories, Postgres's lexical matches and the rows Chroma has not indexed yet.
With Chroma stopped, L2 falls back to Postgres and the store catches up when Chroma returns.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory.observability.metrics import collect_stats, render_prometheus
from memory.recall import recaller as recaller_module
from memory.recall.cache import deep_size
from memory.recall.clauses import split_clauses
from memory.recall.ranking import RankingWeights
from memory.recall.recaller import Recalled, Recaller
from memory.storage.bulk import BulkMemory, analyze, copy_memories
from memory.storage.store import (
    NEAREST_ROWS_SQL,
    OWN_TSV,
    MemoryStore,
    cjk_owner,
    open_store,
)
from memory.storage.vector import LAYERS
from memory.system import recaller
from memory.types import NewMemory, Scope
from tests.support.chinese_memories import CHINESE
from tests.support.chroma_server import ChromaServer
from tests.support.memory_stores import server_settings, server_store_fixture, truncate

pytestmark = pytest.mark.asyncio

ANA = Scope("tiers", "ana")

# Distinct topics, several memories each, so a query has a clear best answer and the corpus is
# larger than the (test-sized) L2 candidate budget of 8.
TOPICS = {
    "garden": [
        "I planted tomatoes and basil in the garden this spring",
        "The roses in my garden need pruning every March",
        "Slugs ate half of the lettuce in the vegetable patch",
        "I bought a new rake and a wheelbarrow for the garden",
    ],
    "car": [
        "My car failed its inspection because of worn brake pads",
        "I drive a blue 2015 Honda Civic with a manual gearbox",
        "The mechanic said the car battery must be replaced soon",
        "I filled the car's tank with diesel by mistake last week",
    ],
    "music": [
        "I have played the cello in a community orchestra for ten years",
        "My favourite composer is Dvořák, especially the cello concerto",
        "I am learning jazz piano chords on weekends",
        "We performed Beethoven's fifth symphony at the town hall",
    ],
    "food": [
        "I am allergic to peanuts and carry an epinephrine pen",
        "My grandmother's lasagne recipe uses three cheeses",
        "I drink two cups of green tea every morning",
        "Sushi is my favourite dinner on Fridays",
    ],
    "work": [
        "I work as a data engineer at a logistics company",
        "My manager asked me to migrate the pipelines to Airflow",
        "The quarterly planning meeting is every first Monday",
        "I am preparing a talk about Postgres indexing for the team",
    ],
    "travel": [
        "Next summer we plan to hike the Tour du Mont Blanc",
        "I lost my passport in Lisbon airport in 2019",
        "My sister lives in Osaka and I visit her every autumn",
        "I prefer window seats on long flights",
    ],
    "中文": [
        "我每天早上在公园里跑步五公里",
        "我的女儿在上海读大学，学习计算机科学",
    ],
}

QUERIES = {
    "what is wrong with my car's brakes?": "car",
    "which instrument do I play in the orchestra?": "music",
    "what food allergy do I have?": "food",
    "where does my sister live?": "travel",
    "what did the slugs eat in the garden?": "garden",
    "我女儿在哪里读大学？": "中文",
}


_settings = partial(server_settings, prefix="tiers")


store = server_store_fixture("tiers")


async def _write_corpus(store: MemoryStore, scope: Scope) -> dict[str, str]:
    """Write the corpus; return memory id -> topic."""
    items = [(topic, text) for topic, texts in TOPICS.items() for text in texts]
    records = await store.write_many(scope, [NewMemory(text) for _, text in items])
    return {r.id: topic for r, (topic, _) in zip(records, items, strict=True)}


async def _searchable(store: MemoryStore, scope: Scope) -> None:
    """Wait until Chroma's nearest-neighbour search returns every active memory of `scope`.

    Chroma answers `get` for an entry (what marks a row indexed) before its search returns it:
    on a loaded machine a row written a moment earlier was missing from the dense leg now and
    then, and the tests below compare the tiers' rankings, not how fresh the index is.
    """
    async with store.pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT id, content FROM memories"
            " WHERE tenant_id = $1 AND user_id = $2 AND status = 'active'",
            scope.tenant_id,
            scope.user_id,
        )
    texts = {row["id"]: row["content"] for row in rows}
    probe = np.zeros(store.embedder.dim, dtype=np.float32)
    probe[0] = 1.0
    deadline = time.monotonic() + 30.0
    while True:
        found = await store.index.nearest(scope, probe, k=len(texts), unfiltered=LAYERS)
        missing = set(texts) - {mid for layer in found for mid, _ in layer.hits}
        # HNSW search is approximate: one far-off probe can miss a row for good, so a row it
        # misses is searched for with its own vector, which finds it once it is indexed.
        for mid in sorted(missing):
            record = await store.get(scope, mid)
            assert record is not None
            own = store.embedder.embed([store.embed_text(record)])[0]
            copies = sum(text == texts[mid] for text in texts.values())
            near = await store.index.nearest(scope, own, k=copies + 2, unfiltered=LAYERS)
            if mid in {m for layer in near for m, _ in layer.hits}:
                missing.discard(mid)
        if not missing:
            return
        assert time.monotonic() < deadline, f"Chroma's search never returned {len(missing)} rows"
        await asyncio.sleep(0.05)


def _cold(r: Recaller) -> None:
    r.cache.clear()
    r.preload_on_miss = False


async def _cold_then_warm(
    r: Recaller, scope: Scope, query: str, *, k: int
) -> tuple[Recalled, Recalled]:
    """The query through L2 (nothing cached), then through L1 (the user preloaded).

    Everything written is indexed first: a row whose upsert lands between L2's Chroma search
    and its Postgres read is in neither (the next recall finds it), which is not what these
    tests compare. `test_unindexed_memory_is_recalled_through_l2` covers rows still queued.
    """
    await r.store.drain()
    await _searchable(r.store, scope)
    _cold(r)
    cold = await r.recall_traced(scope, query, k=k, record_access=False, relevant_only=False)
    assert cold.path == "l2"
    await r.preload(scope)
    warm = await r.recall_traced(scope, query, k=k, record_access=False, relevant_only=False)
    assert warm.path == "l1"
    return cold, warm


async def test_cold_user_through_l2_ranks_like_l1(store: MemoryStore) -> None:
    topics = await _write_corpus(store, ANA)
    r = recaller(store)
    assert len(topics) > r.candidates  # L2 must choose candidates, not rank them all
    for query, topic in QUERIES.items():
        _cold(r)
        cold = await r.recall_traced(ANA, query, k=3, record_access=False, relevant_only=False)
        assert cold.path == "l2"
        assert r.cache.peek(ANA) is None  # a cold recall loads nothing whole
        assert await r.preload(ANA) == len(topics)
        warm = await r.recall_traced(ANA, query, k=3, record_access=False, relevant_only=False)
        assert warm.path == "l1"
        assert topics[cold.hits[0].record.id] == topic, query
        assert cold.hits[0].record.id == warm.hits[0].record.id, query
        # The same scoring function: each L2 score is the sum of its breakdown's terms.
        for hit in cold.hits:
            assert hit.score == pytest.approx(hit.breakdown.total)
            assert hit.breakdown.relevance is not None


async def test_copies_and_chatter_rank_alike_in_l1_and_l2(store: MemoryStore) -> None:
    """Copies of a stock reply follow the answer, chatter borrows no meaning, on both paths."""
    await _write_corpus(store, ANA)
    reply = "Good wedding gifts are personal or useful, something tied to the couple's story."
    talk = "user: What should we give my sister for her wedding?\nassistant: " + reply
    extra = [NewMemory(reply, context=talk) for _ in range(3)]
    extra += [
        NewMemory("ok, thanks", context=talk),
        NewMemory("For the wedding gift we agreed on a set of hand-painted azulejo tiles"),
    ]
    written = await store.write_many(ANA, extra)
    ids = [r.id for r in written]
    r = recaller(store)
    query = "what wedding present are we giving my sister?"
    cold, warm = await _cold_then_warm(r, ANA, query, k=8)
    # The answer and the best copy are close, and L2 ranks a test-sized set of candidates,
    # so which of the two leads may differ between the paths; the rules hold on both.
    for hits in (cold.hits, warm.hits):
        order = [h.record.id for h in hits]
        copies = [i for i in order if i in ids[:3]]
        # One copy may lead; the others come after the answer, which all three outscore.
        assert ids[4] in order[:2] and all(order.index(c) > order.index(ids[4]) for c in copies[1:])
        chatter = {h.record.id: h.breakdown for h in hits}.get(ids[3])
        assert chatter is None or chatter.similarity == 0.0


async def test_dense_trust_is_the_same_on_both_paths(store: MemoryStore) -> None:
    """On Chinese the English model's best cosine barely stands out: both tiers trust it less."""
    scope = Scope("tiers", "zh")
    records = await store.write_many(scope, [NewMemory(t) for t in CHINESE])
    r = recaller(store)
    assert len(records) > r.candidates  # L2 ranks candidates, with the sampled spread
    query = "我做后端吗？"  # only the first memory says "后端"
    cold, warm = await _cold_then_warm(r, scope, query, k=5)
    alpha = RankingWeights().alpha
    for hits in (cold.hits, warm.hits):
        assert hits[0].record.id == records[0].id
        assert max(h.breakdown.similarity for h in hits) < 0.5 * alpha
    # An English query the model understands keeps the dense leg's trust on both paths. The
    # per-query fallback toward the more peaked leg may still move some weight; it reads the
    # lexical leg's peak over the candidates L2 ranks, so the paths agree closely, not exactly.
    english = [NewMemory(text) for texts in TOPICS.values() for text in texts if text.isascii()]
    await store.write_many(ANA, english)
    best: dict[str, float] = {}
    for path in ("l2", "l1"):
        if path == "l2":
            _cold(r)
        else:
            await r.preload(ANA)
        got = await r.recall_traced(
            ANA, "which instrument do I play in the orchestra?", k=3, record_access=False
        )
        assert got.path == path
        best[path] = max(h.breakdown.similarity for h in got.hits)
    assert best["l1"] == pytest.approx(best["l2"], rel=0.05)
    assert best["l1"] > 0.5 * alpha


async def test_a_message_asking_two_things_recalls_both_answers_on_both_paths(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each question of the message is ranked on its own, in L1 and over L2's candidates."""
    cat = [
        "I have a ginger cat called Mochi; she is three.",
        "Mochi sleeps on the radiator all afternoon.",
        "Mochi only eats the salmon kibble from the pet shop.",
        "Mochi scratched the new sofa again, my cat is a menace.",
        "We adopted the cat from the shelter two years ago.",
        "My cat hates the vacuum cleaner.",
    ]
    plumber = "The plumber comes on Thursday at eight to fix the boiler."
    await _write_corpus(store, ANA)
    written = await store.write_many(ANA, [NewMemory(t) for t in [*cat, plumber]])
    answers = {written[0].id, written[-1].id}
    r = recaller(store)
    query = "What is my cat's name? When will the heating be repaired?"
    cold, warm = await _cold_then_warm(r, ANA, query, k=3)
    for found in (cold, warm):
        assert answers <= {h.record.id for h in found.hits}, found.path
    # A caller with the query's embedding already: the clauses are embedded for it.
    vector = store.embedder.embed([query])[0]
    given = await r.recall_traced(ANA, query, k=3, record_access=False, query_vector=vector)
    assert answers <= {h.record.id for h in given.hits}
    # Ranked as one question, the cat's memories crowd one of the answers out.
    split = recaller_module.split_clauses
    monkeypatch.setattr(recaller_module, "split_clauses", lambda _: [])
    whole = await r.recall_traced(ANA, query, k=3, record_access=False, relevant_only=False)
    assert not answers <= {h.record.id for h in whole.hits}
    # The agent's turn (the recall node) takes the same path. Last: it records access, which
    # would raise both answers in the recalls above.
    monkeypatch.setattr(recaller_module, "split_clauses", split)
    turn = await r.recall_turn(ANA, query, k=3, weights=RankingWeights())
    assert answers <= {h.record.id for h in turn.hits}


async def test_a_large_user_is_searched_before_the_clauses_are_embedded(
    store: MemoryStore,
) -> None:
    """Chroma needs the whole message's vector only: its clauses are embedded meanwhile."""
    await _write_corpus(store, ANA)
    cat = await store.write(ANA, NewMemory("I have a ginger cat called Mochi; she is three."))
    plumber = await store.write(ANA, NewMemory("The plumber comes on Thursday to fix the boiler."))
    await store.drain()
    r = recaller(store)
    _cold(r)
    r.candidates = r.lexical_candidates = 8  # the corpus is larger: a large user
    query = "What is my cat's name? When will the heating be repaired?"
    parts = split_clauses(query)
    assert len(parts) == 2
    first = await r.recall_traced(ANA, query, k=3, record_access=False, relevant_only=False)
    assert ANA.key in r._large  # the first recall found out; the next one knows
    searched = asyncio.Event()
    asked_with: list[np.ndarray] = []
    embed, nearest = store.embedder.aembed, store.index.nearest

    async def embed_spy(texts: list[str]) -> Any:
        if set(parts) & set(texts):  # the clauses wait until Chroma has been asked
            await asyncio.wait_for(searched.wait(), timeout=10)
        return await embed(texts)

    async def nearest_spy(scope: Scope, vector: np.ndarray, **kwargs: Any) -> Any:
        asked_with.append(vector)
        searched.set()
        return await nearest(scope, vector, **kwargs)

    store.embedder.memo.clear()
    store.embedder.aembed = embed_spy  # type: ignore[method-assign]
    store.index.nearest = nearest_spy  # type: ignore[method-assign]
    try:
        second = await r.recall_traced(ANA, query, k=3, record_access=False, relevant_only=False)
    finally:
        del store.embedder.aembed, store.index.nearest
    assert second.path == first.path == "l2"
    np.testing.assert_allclose(asked_with[0], store.embedder.embed([query])[0], atol=1e-5)
    # Ranked by each question as before: both answers.
    for found in (first, second):
        assert {cat.id, plumber.id} <= {h.record.id for h in found.hits}
    assert second.questions == first.questions == tuple(parts)

    # The model failing: the recall says so (it neither hangs nor answers without a vector).
    async def broken(texts: list[str]) -> Any:
        raise RuntimeError("the embedding model is gone")

    store.embedder.memo.clear()
    store.embedder.aembed = broken  # type: ignore[method-assign]
    try:
        with pytest.raises(RuntimeError, match="model is gone"):
            await asyncio.wait_for(r.recall_traced(ANA, query, k=3), timeout=10)
    finally:
        del store.embedder.aembed


async def test_cold_recall_preloads_in_background(store: MemoryStore) -> None:
    await _write_corpus(store, ANA)
    r = recaller(store)
    r.cache.clear()
    r.preload_on_miss = True
    first = await r.recall_traced(ANA, "what food allergy do I have?", k=3)
    assert first.path == "l2"
    await store.drain()  # the preload was spawned, not awaited
    second = await r.recall_traced(ANA, "what food allergy do I have?", k=3)
    assert second.path == "l1"
    assert [h.record.id for h in first.hits][:1] == [h.record.id for h in second.hits][:1]


async def test_user_over_l1_limit_is_never_loaded_whole(
    pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path, chroma_server: ChromaServer
) -> None:
    settings = _settings(
        pg_db_url, tmp_data_dir, embedding_model_dir, chroma_server.url, recall_cache_user_max=10
    )
    async with open_store(settings) as store:
        await truncate(store)
        topics = await _write_corpus(store, ANA)
        r = Recaller(store)  # this store's own recaller, with the limit of these settings
        assert r.cache.user_max == 10 < len(topics)
        assert await r.preload(ANA) == 0
        for query, topic in QUERIES.items():
            found = await r.recall_traced(ANA, query, k=3, record_access=False)
            assert found.path == "l2"
            assert found.hits and topics[found.hits[0].record.id] == topic, query
        await store.drain()  # any background preload has run: still nothing cached
        assert len(r.cache) == 0 and r.cache.memories() == 0
        # What L2 keeps (the user's vector sample for the relevance spread) is charged to L1.
        assert 0 < r.cache.held_bytes == r.cache.side_bytes <= 64 * 384 * 2
        assert r.cache.refused == 0  # refused before loading, by count: never built
        similar = await r.similar(ANA, "my car needs new brake pads", k=2)
        assert topics[similar[0][0].id] == "car"
        assert await r.long_term(ANA) == []  # none of the corpus is long-term


async def test_l1_stays_within_its_byte_budget(store: MemoryStore) -> None:
    users = [Scope("tiers", f"u{i}") for i in range(12)]
    for i, user in enumerate(users):
        texts = [f"user {i} note {j}: {t}" for j, t in enumerate(TOPICS["work"] + TOPICS["car"])]
        await store.write_many(user, [NewMemory(t) for t in texts])
    probe = recaller(store)
    probe.cache.clear()
    await probe.preload(users[0])
    one = probe.cache.held_bytes
    assert one > 0
    budget = int(one * 4.5)  # room for four users
    r = Recaller(store)
    r.cache = type(probe.cache)(budget, user_share=0.5)
    for user in users:
        assert await r.preload(user) == 8
        assert r.cache.held_bytes <= budget
    assert len(r.cache) == 4 and r.cache.evictions == len(users) - 4
    # The bytes counted are the entries' measured sizes, not an estimate.
    held = [r.cache.peek(u) for u in users if r.cache.peek(u) is not None]
    assert sum(deep_size(e) for e in held if e is not None) == pytest.approx(
        r.cache.held_bytes, rel=0.05
    )


async def test_unindexed_memory_is_recalled_through_l2(store: MemoryStore) -> None:
    topics = await _write_corpus(store, ANA)
    lagging = await store.write(ANA, NewMemory("My dentist appointment is on the 14th at 9am"))
    # Chroma never got it (as if this process died between the commit and the upsert).
    await store.index.delete(ANA, [lagging.id])
    async with store.pool.acquire() as conn:
        await conn.execute("UPDATE memories SET indexed_at = NULL WHERE id = $1", lagging.id)
    assert await store.index.count_scope(ANA) == len(topics)
    r = recaller(store)
    _cold(r)
    found = await r.recall_traced(ANA, "when is my dentist appointment?", k=3)
    assert found.path == "l2"
    assert found.hits[0].record.id == lagging.id


async def test_chroma_outage_falls_back_and_catches_up(
    pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path, chroma_server: ChromaServer
) -> None:
    settings = _settings(pg_db_url, tmp_data_dir, embedding_model_dir, chroma_server.url)
    async with open_store(settings) as store:
        await truncate(store)
        # A user of this test only: opening the store reindexed earlier tests' leftovers.
        who = Scope("tiers", "outage-" + uuid.uuid4().hex[:8])
        topics = await _write_corpus(store, who)
        r = recaller(store)
        _cold(r)
        before = dict(r.paths)
        chroma_server.stop()
        found = await r.recall_traced(who, "which instrument do I play in the orchestra?", k=3)
        assert found.path == "l2-fallback"
        assert found.hits and topics[found.hits[0].record.id] == "music"
        assert store.index_health.down and store.index_health.outages == 1
        # Written while Chroma is down: kept in Postgres, recalled from there.
        kept = await store.write(who, NewMemory("My new cat is called Pixel and she is grey"))
        row = await store.get(who, kept.id)
        assert row is not None and row.indexed_at is None
        _cold(r)
        found = await r.recall_traced(who, "what is my cat called?", k=3)
        assert found.path == "l2-fallback" and found.hits[0].record.id == kept.id
        assert r.paths["l2-fallback"] == before["l2-fallback"] + 2
        text = render_prometheus(await collect_stats(store))
        assert 'memory_recall_path_total{path="l2-fallback"} 2.0' in text
        assert "memory_chroma_up 0.0" in text
        chroma_server.start()
        # Nobody calls reindex: the store's probe notices Chroma and indexes what it missed.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            row = await store.get(who, kept.id)
            if row is not None and row.indexed_at is not None:
                break
            await asyncio.sleep(0.5)
        assert row is not None and row.indexed_at is not None
        assert not store.index_health.down and store.index_health.recoveries == 1
        assert store.index_health.caught_up >= 1
        docs = await store.index.documents_for(who)
        assert len(docs) == len(topics) + 1, sorted(d for _, d, _ in docs)
        _cold(r)
        found = await r.recall_traced(who, "what is my cat called?", k=3)
        assert found.path == "l2" and found.hits[0].record.id == kept.id
        text = render_prometheus(await collect_stats(store))
        assert "memory_chroma_up 1.0" in text and "memory_chroma_recoveries_total 1.0" in text


def _hourly(
    scope: Scope, prefix: str, template: str, start: datetime, vectors: np.ndarray
) -> list[BulkMemory]:
    """One synthetic memory per vector, an hour apart: ids `prefix000`..., text `template`."""
    return [
        BulkMemory(scope, f"{prefix}{i:03d}", template.format(i), start + timedelta(hours=i), v)
        for i, v in enumerate(vectors)
    ]


async def _standups_and_a_rare_one(
    store: MemoryStore, scope: Scope, n: int, rare: str, *, seed: int, rare_days: int
) -> None:
    """`n` memories "Standup notes for sprint day i", an hour apart, and one memory `rare`
    (id "rare") `rare_days` from the first; random vectors, written straight to Postgres."""
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n + 1, store.embedder.dim)).astype(np.float32)
    start = datetime(2025, 1, 6, tzinfo=UTC)
    items = _hourly(scope, "c", "Standup notes for sprint day {}", start, vectors[:n])
    items.append(BulkMemory(scope, "rare", rare, start + timedelta(days=rare_days), vectors[n]))
    await copy_memories(store.pool, items, model=store.embedder.name, indexed_at=datetime.now(UTC))


async def test_lexical_leg_of_a_large_user_is_bounded_and_finds_the_rare_word(
    store: MemoryStore,
) -> None:
    # 400 memories share a common word; one memory, written last, has a rare one. A single
    # scan over both words, cut after a fixed number of rows in table order, would stop long
    # before the rare row; each word's own bounded scan finds it.
    scope = Scope("tiers", "whale")
    await _standups_and_a_rare_one(
        store, scope, 400, "My niece Quillanora plays the oboe", seed=7, rare_days=30
    )
    limit = 8
    found = await store.candidates(scope, terms=["standup", "quillanora"], limit=limit, whole=False)
    ids = [r.id for r in found.records]
    assert not found.complete
    assert "rare" in ids
    assert len(ids) <= limit  # no dense ids, nothing unindexed: the lexical leg alone
    assert len(found.vectors) == len(found.features) == len(ids)
    # A query of common words only is bounded the same way.
    common = await store.candidates(scope, terms=["standup", "sprint*"], limit=limit, whole=False)
    assert 0 < len(common.records) <= limit
    assert "rare" not in {r.id for r in common.records}
    # Through the recaller (the user is over its candidate budget): the rare memory ranks first.
    r = recaller(store)
    _cold(r)
    hit = await r.recall_traced(scope, "who plays the oboe, Quillanora?", k=3, relevant_only=False)
    assert hit.path == "l2"
    assert hit.hits and hit.hits[0].record.id == "rare"


async def test_the_lexical_leg_has_a_budget_of_its_own(store: MemoryStore) -> None:
    # `lexical_limit` bounds the word matches alone: the rare word still comes first among
    # them, and a user within `limit` is still returned whole, whatever the lexical budget.
    scope = Scope("tiers", "whale-lexical")
    await _standups_and_a_rare_one(
        store, scope, 400, "My niece Quillanora plays the oboe", seed=9, rare_days=5
    )
    terms = ["standup", "sprint*", "quillanora"]
    wide = await store.candidates(scope, terms=terms, limit=8, whole=False)
    narrow = await store.candidates(scope, terms=terms, limit=8, lexical_limit=3, whole=False)
    assert len(wide.records) == 8
    assert 0 < len(narrow.records) <= 3 and "rare" in {r.id for r in narrow.records}
    small = Scope("tiers", "minnow")
    await store.write_many(small, [NewMemory(f"Standup note {i}") for i in range(5)])
    whole = await store.candidates(small, terms=["standup"], limit=8, lexical_limit=1)
    assert whole.complete and len(whole.records) == 5
    # The recaller asks for its configured lexical budget on both L2 paths.
    asked: list[int | None] = []
    original = store.candidates

    async def spy(*args: Any, **kwargs: Any) -> Any:
        asked.append(kwargs.get("lexical_limit"))
        return await original(*args, **kwargs)

    r = recaller(store)
    _cold(r)
    r.lexical_candidates = 3
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store, "candidates", spy)
        await r.recall_traced(scope, "who plays the oboe, Quillanora?", k=3, relevant_only=False)
        await r.recall_traced(scope, "what did the standup decide?", k=3, relevant_only=False)
    assert asked and set(asked) == {3}


async def test_a_rare_word_outranks_rows_matching_several_common_words(store: MemoryStore) -> None:
    # 400 memories match two of the query's words, one memory its rare word. Ranked by
    # `ts_rank` alone the two-word rows fill the leg's 8 places; ranked as BM25 weighs words
    # (a word matched by fewer rows counts more), the rare row comes first.
    scope = Scope("tiers", "whale-ranked")
    await _standups_and_a_rare_one(
        store, scope, 400, "My niece Quillanora plays the oboe", seed=8, rare_days=-30
    )
    found = await store.candidates(
        scope, terms=["standup", "sprint*", "quillanora"], limit=8, whole=False
    )
    ids = [r.id for r in found.records]
    assert ids and "rare" in ids and len(ids) <= 8
    # One common word alone: which 16 of its 400 matches are read is arbitrary (table order),
    # so none of them is taken; the dense leg finds what is near the query's meaning.
    alone = await store.candidates(scope, terms=["standup"], limit=8, whole=False)
    assert alone.records == []


async def _own_index_reads(store: MemoryStore) -> int:
    """Index entries the owner-keyed word index has returned so far (Postgres's statistics)."""
    async with store.pool.acquire() as conn:
        await conn.execute("SELECT pg_stat_clear_snapshot()")
        reads = await conn.fetchval(
            "SELECT idx_tup_read FROM pg_stat_user_indexes WHERE indexrelname = 'memories_own_tsv'"
        )
    return int(reads or 0)


async def _reads_of(store: MemoryStore, lookup: Any) -> int:
    """How many word-index entries `lookup` read.

    A backend sends its statistics on its own schedule (up to 10 s later when it sent some
    within the last second), so each connection the lookup used is told to send them at once
    before it goes back to the pool: the count is then complete when the lookup returns.
    """
    before = await _own_index_reads(store)
    real = store.pool.acquire

    @asynccontextmanager
    async def flushing() -> AsyncIterator[Any]:
        async with real() as conn:
            try:
                yield conn
            finally:
                # Flushed when the backend next goes idle, before this statement returns.
                await conn.execute("SELECT pg_stat_force_next_flush()")

    store.pool.acquire = flushing  # type: ignore[method-assign]
    try:
        await lookup
    finally:
        del store.pool.acquire
    deadline = time.monotonic() + 15.0
    while (after := await _own_index_reads(store)) == before and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return after - before


def _sampling_recaller(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> tuple[Recaller, list[dict[str, Any]]]:
    """A cold recaller that samples the lexical leg of users over 1,000 memories, and the
    keyword arguments of every `store.candidates` call made from here on."""
    monkeypatch.setattr(recaller_module, "SAMPLED_LEXICAL_ABOVE", 1000)
    r = recaller(store)
    _cold(r)
    asked: list[dict[str, Any]] = []
    real = store.candidates

    async def spy(*args: Any, **kwargs: Any) -> Any:
        asked.append(kwargs)
        return await real(*args, **kwargs)

    monkeypatch.setattr(store, "candidates", spy)
    return r, asked


async def test_a_very_large_users_word_lookups_are_sampled(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A user with very many memories: a common word's lookup reads a random sample of its
    # matches, not all of them; a rare word is still found whole, in any inflection.
    scope = Scope("tiers", "giant")
    await _standups_and_a_rare_one(
        store, scope, 3000, "Quillanora booked oboe lessons for the spring", seed=9, rare_days=-30
    )
    async with store.pool.acquire() as conn:
        # The planner's statistics are made current first, so the plan whose reads are counted
        # does not depend on when autovacuum last analysed the table.
        await conn.execute("ANALYZE memories")
    whole = await _reads_of(store, store.candidates(scope, terms=["standup"], limit=8, whole=False))
    sampled = await _reads_of(
        store, store.candidates(scope, terms=["standup"], limit=8, whole=False, sampled=True)
    )
    assert whole >= 3000
    # About 2 x 2 x 8 of the word's matches are kept, as far as Postgres estimates how many it
    # has from the index's pages (roughly, for so small an index): a fraction of the 3,000.
    assert 0 < sampled * 4 < whole
    found = await store.candidates(
        scope, terms=["standup", "quillanora", "book|booked|booking"], limit=8, whole=False,
        sampled=True,
    )  # fmt: skip
    assert "rare" in {r.id for r in found.records}
    # Through the recaller: once the user is counted over the threshold, its lexical leg asks
    # for the query words' forms, sampled, and the rare memory ranks first.
    r, asked = _sampling_recaller(store, monkeypatch)
    query = "who is booking the oboe lessons, Quillanora?"
    for _ in range(2):  # the first recall finds the user large; the second has them counted
        await r.recall_traced(scope, query, k=3, record_access=False)
        await store.drain()
    assert r._row_count(scope) == 3001
    hit = await r.recall_traced(scope, query, k=3, relevant_only=False, record_access=False)
    assert hit.path == "l2" and hit.hits[0].record.id == "rare"
    lexical = [a for a in asked if a.get("terms")][-1]
    assert lexical["sampled"] is True
    assert {"booking", "book", "booked"} <= set(lexical["terms"][0].split("|"))


async def test_a_very_large_users_common_words_are_learnt_and_not_looked_up_again(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A word with a whole lookup's worth of matches only adds rows another word also finds:
    # the lookup says so, and a later lookup given it as common does not look it up, while
    # the rare word is still found.
    scope = Scope("tiers", "giant-words")
    await _standups_and_a_rare_one(
        store, scope, 3000, "Quillanora booked standup oboe lessons", seed=10, rare_days=-30
    )
    terms = ["standup", "quillanora"]
    first = await store.candidates(scope, terms=terms, limit=8, whole=False, sampled=True)
    assert first.saturated == {"standup"}  # 3,001 matches; the name has one
    assert "rare" in {r.id for r in first.records}
    # Not looked up, so not found saturated again; the name's row still ranks first.
    again = await store.candidates(
        scope, terms=terms, limit=8, whole=False, sampled=True, common=first.saturated
    )
    assert [r.id for r in again.records][:1] == ["rare"] and again.saturated == frozenset()
    # Through the recaller: learnt on one recall, passed back on the next, forgotten in time.
    r, asked = _sampling_recaller(store, monkeypatch)
    query = "which standup had Quillanora's oboe lessons?"
    # Found large; counted (sampled from here on); words learnt; then passed back.
    for _ in range(4):
        hit = await r.recall_traced(scope, query, k=3, relevant_only=False, record_access=False)
        await store.drain()
    common = r._common_words(scope)
    assert [w for w in common if "standup" in w.split("|")] and len(common) == 1
    assert [a.get("common") for a in asked[-2:]] == [frozenset(), common]
    assert hit.path == "l2" and hit.hits[0].record.id == "rare"
    monkeypatch.setattr(recaller_module, "COMMON_WORDS_TTL_S", 0.0)
    assert r._common_words(scope) == frozenset()
    # Bounded per user: the words learnt last are kept, none longer than the limit.
    monkeypatch.setattr(recaller_module, "COMMON_WORDS_TTL_S", 300.0)
    r._learn_common(scope, [f"w{i}" for i in range(300)])
    r._learn_common(scope, ["x" * (recaller_module.COMMON_WORD_MAX_CHARS + 1)])
    kept = r._common[scope.key]
    assert list(kept) == [f"w{i}" for i in range(300 - recaller_module.COMMON_WORDS_PER_USER, 300)]


async def test_a_lexical_lookup_reads_its_owners_matches_only(store: MemoryStore) -> None:
    # Another user's 300 rows share the word: a lookup keyed by word alone (one index for
    # everyone) reads all 320 matches and drops the 300 after reading them.
    mine, theirs = Scope("tiers", "lex-mine"), Scope("tiers", "lex-theirs")
    rng = np.random.default_rng(11)
    vectors = rng.standard_normal((322, store.embedder.dim)).astype(np.float32)
    start = datetime(2025, 2, 3, tzinfo=UTC)
    items = _hourly(theirs, "t", "Standup with ØRSTED, sprinting {}", start, vectors[:300])
    items += _hourly(mine, "m", "Standup notes {}", start, vectors[300:320])
    items.append(BulkMemory(mine, "wind", "Called Ørsted about the wind farm, sprinting after",
                            start + timedelta(days=30), vectors[320]))  # fmt: skip
    await copy_memories(store.pool, items, model=store.embedder.name, indexed_at=datetime.now(UTC))
    # Upper case and a non-ASCII letter are lower-cased as the stored words were; a stem
    # ending in `*` matches by prefix.
    for terms in (["ØRSTED"], ["sprint*"], ["orsted", "wind"]):
        found = await store.candidates(mine, terms=terms, limit=8, whole=False)
        assert [r.id for r in found.records] == ["wind"], terms
    owner = cjk_owner(mine)
    async with store.pool.acquire() as conn:
        await conn.execute("SET enable_seqscan = off")  # the index, as a large table uses it
        plan = await conn.fetchval(
            "EXPLAIN (ANALYZE, FORMAT JSON) SELECT id FROM memories"
            f" WHERE {OWN_TSV} @@ $1::tsquery",
            f"'{owner}standup'",
        )
    node = json.loads(plan)[0]["Plan"]
    while node.get("Node Type") != "Bitmap Index Scan":
        node = node["Plans"][0]
    assert node["Index Name"] == "memories_own_tsv"
    assert node["Actual Rows"] == 20


def _plan_nodes(node: dict[str, Any]) -> list[dict[str, Any]]:
    """A JSON plan node and every node under it."""
    return [node, *(n for child in node.get("Plans", []) for n in _plan_nodes(child))]


async def test_the_dense_rows_are_read_by_id_in_the_plan_kept_for_every_user(
    store: MemoryStore,
) -> None:
    # After five calls on one connection Postgres may keep a single plan for all parameter
    # values, made for the average user (here ~10 rows). In that plan no step may read all of
    # a large user's rows: the ids Chroma returned drive the read.
    big, others = Scope("tiers", "by-id"), [Scope("tiers", f"by-id-{i}") for i in range(300)]
    rng = np.random.default_rng(12)
    vectors = rng.standard_normal((3300, store.embedder.dim)).astype(np.float32)
    start = datetime(2025, 3, 3, tzinfo=UTC)
    items = _hourly(big, "b", "Note {}", start, vectors[:3000])
    items += [BulkMemory(o, f"o{i:03d}", "Other note", start, vectors[3000 + i])
              for i, o in enumerate(others)]  # fmt: skip
    await copy_memories(store.pool, items, model=store.embedder.name, indexed_at=datetime.now(UTC))
    await analyze(store.pool)
    nearest = ["o001", "b010", "o002", "b011", "b012", "b013", "b014"]
    checked: list[str] = []

    def literal(values: list[str]) -> str:  # test ids: letters and digits only
        return "ARRAY[" + ",".join(f"'{v}'" for v in values) + "]::text[]"

    async with store.pool.acquire() as conn:
        await conn.execute(
            "PREPARE nearest_rows (text, text, text[], text[], int[], int) AS " + NEAREST_ROWS_SQL
        )
        try:
            await conn.execute("SET plan_cache_mode = force_generic_plan")
            plan = await conn.fetchval(
                "EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE nearest_rows ('tiers', 'by-id', "
                f"{literal(checked)}, {literal(nearest)}, ARRAY[0,0,0,0,0,0,0]::int[], 3)"
            )
        finally:
            await conn.execute("RESET plan_cache_mode; DEALLOCATE nearest_rows")
    top = json.loads(plan)[0]["Plan"]
    assert top["Actual Rows"] == 3  # the user's first three of the list
    nodes = _plan_nodes(top)
    assert any("$1" in json.dumps(n) for n in nodes)  # the plan kept for all values
    shape = [(n["Node Type"], n.get("Index Name"), n["Actual Rows"]) for n in nodes]
    assert max(rows for *_, rows in shape) < 100, "; ".join(map(str, shape))
    found = await store.nearest_rows(big, ids=["b020"], nearest=[nearest], limit=3)
    assert sorted(r.id for r in found.records) == ["b010", "b011", "b012", "b020"]
    # An id in both branches (hits of two layers) comes back once.
    found = await store.nearest_rows(big, ids=["b020", "b011"], nearest=[nearest], limit=3)
    assert sorted(r.id for r in found.records) == ["b010", "b011", "b012", "b020"]
    assert len(found.vectors) == len(found.features) == 4


async def test_words_too_long_for_the_word_index_are_stored_and_the_rest_found(
    store: MemoryStore,
) -> None:
    # The owner-keyed index prefixes every word with 8 characters: words at and past Postgres's
    # 2,047-byte limit for one must neither fail the write nor hide the memory's other words.
    scope = Scope("tiers", "long-words")
    for n in (2040, 2047, 5000):
        await store.write(scope, NewMemory("x" * n + f" Zanzibarian ferry {n}"))
    await store.write(scope, NewMemory(" ".join(f"w{i}" for i in range(3000))))
    found = await store.candidates(scope, terms=["zanzibarian"], limit=8, whole=False)
    assert sorted(r.content[-4:] for r in found.records) == ["2040", "2047", "5000"]


async def test_hostile_query_text_reaches_postgres_only_as_data(store: MemoryStore) -> None:
    await _write_corpus(store, ANA)
    r = recaller(store)
    for query in ["') OR 1=1 --", "a & b | !c <-> d:*", "%_\\", "\x00", "雨" * 500, ""]:
        _cold(r)
        found = await r.recall_traced(replace(ANA), query, k=3, relevant_only=False)
        assert found.path == "l2"


async def test_sharded_layout_serves_l2_and_a_rebuild_moves_everything(
    pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path, chroma_server: ChromaServer
) -> None:
    base = _settings(pg_db_url, tmp_data_dir, embedding_model_dir, chroma_server.url)
    one = replace(base, chroma_shards=1)
    users = [Scope("tiers", f"shard-{i}") for i in range(6)]
    async with open_store(one) as store:
        await truncate(store)
        written = {u: await _write_corpus(store, u) for u in users}
        old = store.index.current_collections()
    sharded = replace(one, chroma_shards=4)
    async with open_store(sharded, reindex_on_start=False, migrate_layout=False) as store:
        assert store.index.current_collections().isdisjoint(old - {one.chroma_prefix + "_images"})
        # What `memory-agent reindex --rebuild` runs, and start-up runs on a layout change.
        done, dropped = await store.rebuild_index()
        assert done == sum(len(t) for t in written.values())
        # The old layout's collections that existed (a layer never written has none) are gone.
        assert f"{one.chroma_prefix}_episodic" in dropped
        assert set(dropped) <= {f"{one.chroma_prefix}_episodic", f"{one.chroma_prefix}_longterm"}
        assert await store.index.other_layouts() == []
    async with open_store(one) as store:  # back to one collection: start-up rebuilds by itself
        assert await store.index.other_layouts() == []
        assert await store.index.count_scope(users[0]) == len(written[users[0]])
    async with open_store(sharded) as store:
        r = recaller(store)
        for user in users:
            assert await store.index.count_scope(user) == len(written[user])
            _cold(r)
            found = await r.recall_traced(user, "what is wrong with my car's brakes?", k=3)
            assert found.path == "l2" and written[user][found.hits[0].record.id] == "car"
        # Each user's entries are in one shard: the others hold none of them.
        vector = (await store.embedder.aembed(["brakes"]))[0]
        hits = await store.index.query(users[0], vector, k=50)
        assert {h[0] for h in hits} <= set(written[users[0]])


async def test_a_large_layer_is_never_searched_with_the_owner_filter(store: MemoryStore) -> None:
    # A user far over the candidate budget whose query neighbourhood is all other users'
    # entries: the unfiltered search returns few of theirs. A filtered search would find more,
    # but costs in proportion to the user's entries (over a second at 200,000, on every later
    # query): past `filtered_search_max` the unfiltered hits are kept, still only their own.
    from memory.storage.vector import shard_of

    shards = store.index.settings.chroma_shards
    whale = Scope("tiers", "whale-far")
    rng = np.random.default_rng(11)
    query = rng.standard_normal(store.embedder.dim).astype(np.float32)
    query /= np.linalg.norm(query)

    def near(n: int, spread: float) -> np.ndarray:
        v = query + spread * rng.standard_normal((n, store.embedder.dim)).astype(np.float32)
        return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)

    # 40 of the whale's own, further from the query than every other user's entry.
    own = await store.write_many(
        whale, [NewMemory(f"whale note {i}") for i in range(40)], vectors=near(40, 0.35)
    )
    others = [s for s in (Scope("tiers", f"minnow{i}") for i in range(200))
              if shard_of(s, shards) == shard_of(whale, shards)][:12]  # fmt: skip
    for scope in others:
        await store.write_many(
            scope, [NewMemory(f"minnow note {i}") for i in range(2)], vectors=near(2, 0.05)
        )
    await store.drain()  # every entry indexed in Chroma
    searched: list[list[str]] = []
    original = store.index.query

    async def counted(*args: object, **kwargs: object) -> object:
        searched.append(list(kwargs.get("layers") or []))
        return await original(*args, **kwargs)  # type: ignore[arg-type]

    store.index.query = counted  # type: ignore[method-assign]
    try:
        r = recaller(store)
        _cold(r)
        r.filtered_search_max = 10  # the whale's 40 episodic entries are "too many"
        got = await r.recall_traced(whale, "whale note", k=8, query_vector=query,
                                    relevant_only=False)  # fmt: skip
        assert got.path == "l2"
        assert "episodic" not in [x for layers in searched for x in layers]
        assert got.hits and {h.record.id for h in got.hits} <= {m.id for m in own}
        # Within the bound the filtered search runs, and is remembered for this user.
        r.filtered_search_max = 5_000
        r._sizes.clear()
        await r.recall_traced(whale, "whale note", k=8, query_vector=query, relevant_only=False)
        assert ["episodic"] in searched
        assert "episodic" in r._large[whale.key]
    finally:
        del store.index.query


async def test_a_user_holding_nearly_all_of_a_layer_is_asked_for_fewer_hits(
    store: MemoryStore,
) -> None:
    # Chroma is asked for 2 x the candidate budget while it is unknown how many of a layer's
    # nearest entries are the user's; once nearly all were, for a tenth over the budget.
    from memory.storage.vector import shard_of

    shards = store.index.settings.chroma_shards
    whale = Scope("tiers", "whale-home")
    rng = np.random.default_rng(12)
    query = rng.standard_normal(store.embedder.dim).astype(np.float32)
    query /= np.linalg.norm(query)
    vectors = query + 0.3 * rng.standard_normal((60, store.embedder.dim)).astype(np.float32)
    own = await store.write_many(
        whale, [NewMemory(f"whale diary {i}") for i in range(60)], vectors=vectors
    )
    other = next(s for s in (Scope("tiers", f"guest{i}") for i in range(200))
                 if shard_of(s, shards) == shard_of(whale, shards))  # fmt: skip
    await store.write_many(other, [NewMemory("guest note")], vectors=-query[None, :])
    await store.drain()
    asked: list[dict[str, int]] = []
    original = store.index.nearest

    async def spy(*args: Any, **kwargs: Any) -> Any:
        asked.append(dict(kwargs.get("fetch") or {}))
        return await original(*args, **kwargs)

    store.index.nearest = spy  # type: ignore[method-assign]
    try:
        r = recaller(store)
        _cold(r)
        limit = r.candidates
        tops = []
        for _ in range(3):
            got = await r.recall_traced(whale, "whale diary", k=5, query_vector=query,
                                        relevant_only=False, record_access=False)  # fmt: skip
            assert got.path == "l2"
            assert {h.record.id for h in got.hits} <= {m.id for m in own}
            tops.append([h.record.id for h in got.hits])
    finally:
        del store.index.nearest
    # The first search asks the default 2 x budget; once the share is known, ~1.1 x budget.
    episodic = [a.get("episodic") for a in asked if a is not None]
    assert episodic[0] is None
    assert episodic[-1] == int(np.ceil(1.1 * limit)) < 2 * limit
    assert tops[0] == tops[-1]  # the same nearest memories, from a smaller search


async def test_word_lookups_use_the_owner_index_when_statistics_are_stale(
    store: MemoryStore,
) -> None:
    # The planner last saw the table empty; one user then gets 600 memories. Planned from
    # those statistics at the default function cost, the lookup scanned the user's rows and
    # computed each one's owner-keyed words (no index entry read); it must use the index.
    async with store.pool.acquire() as conn:
        await conn.execute("ANALYZE memories")
    scope = Scope("tiers", "fresh-import")
    await _standups_and_a_rare_one(
        store, scope, 600, "Quillanora booked oboe lessons", seed=5, rare_days=10
    )
    reads = await _reads_of(
        store, store.candidates(scope, terms=["quillanora", "oboe"], limit=8, whole=False)
    )
    assert reads > 0
    found = await store.candidates(scope, terms=["quillanora", "oboe"], limit=8, whole=False)
    assert [r.id for r in found.records] == ["rare"]
