"""A memory's own-text vector beside its context-bearing one, on real Postgres, Chroma, model.

A memory written with context is embedded twice in one call: "speaker: content" + context (what
Chroma indexes) and "speaker: content" alone (stored in `own_embedding`). Recall ranks by the
mean of the two cosines on both tiers; a memory without context has one vector.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import pytest

from memory.recall.recaller import Recaller
from memory.storage.edits import replace_content
from memory.storage.migrations import MIGRATIONS
from memory.storage.rows import new_id, vector_from_bytes
from memory.storage.store import MemoryStore, open_store
from memory.system import recaller
from memory.types import NewMemory, Scope
from tests.integration.test_recall_tiers import TOPICS
from tests.support.chroma_server import ChromaServer
from tests.support.memory_stores import (
    server_settings,
    server_store_fixture,
    write_before_migration,
)
from tests.support.postgres import PostgresServer

pytestmark = pytest.mark.asyncio

LENA = Scope("ownvec", "lena")
FACT = "By the way, Gina is my sister-in-law"
# An earlier turn about something else entirely: the fact's context-bearing vector is partly
# about brake pads.
CONTEXT = (
    "assistant: To replace the brake pads on a Honda Civic, first loosen the lug nuts, jack up"
    " the car, remove the caliper bolts, slide out the old pads and compress the piston."
)
QUERY = "Who is my sister-in-law?"

_settings = partial(server_settings, prefix="ownv")


store = server_store_fixture("ownv")


def _fact() -> NewMemory:
    return NewMemory(FACT, context=CONTEXT, provenance={"speaker": "user"})


async def _stored(store: MemoryStore, memory_id: str) -> tuple[np.ndarray, np.ndarray | None]:
    async with store.pool.acquire() as conn:
        row = await conn.fetchrow(
            "SELECT embedding, own_embedding FROM memories WHERE id = $1", memory_id
        )
    assert row is not None
    vector = vector_from_bytes(row["embedding"], store.embedder.dim)
    assert vector is not None
    return vector, vector_from_bytes(row["own_embedding"], store.embedder.dim)


async def test_memory_with_context_gets_both_vectors_and_a_chat_memory_one(
    store: MemoryStore,
) -> None:
    fact, chat = await store.write_many(LENA, [_fact(), NewMemory("I drink green tea daily")])
    expected = store.embedder.embed(
        [store.embed_text(_fact()), "user: " + FACT, "I drink green tea daily"]
    )
    vector, own = await _stored(store, fact.id)
    assert own is not None
    assert float(vector @ expected[0]) == pytest.approx(1.0, abs=1e-5)  # with context
    assert float(own @ expected[1]) == pytest.approx(1.0, abs=1e-5)  # its own words only
    assert float(vector @ own) < 0.95  # the context moved the first away from the fact
    chat_vector, chat_own = await _stored(store, chat.id)
    assert chat_own is None  # no context: its one vector is both
    assert float(chat_vector @ expected[2]) == pytest.approx(1.0, abs=1e-5)
    # Vectors given without own-text vectors (an import that carries its vectors): the own
    # text is embedded here, so nothing is stored without it.
    given = store.embedder.embed([store.embed_text(_fact())])
    (again,) = await store.write_many(LENA, [_fact()], vectors=given)
    _, again_own = await _stored(store, again.id)
    assert again_own is not None and float(again_own @ expected[1]) == pytest.approx(1.0, abs=1e-5)


async def test_l1_and_l2_rank_a_context_diluted_fact_alike_by_the_mean_cosine(
    store: MemoryStore,
) -> None:
    corpus = [NewMemory(t) for texts in TOPICS.values() for t in texts]
    await store.write_many(LENA, corpus)
    (fact,) = await store.write_many(LENA, [_fact()])
    vector, own = await _stored(store, fact.id)
    assert own is not None
    q = store.embedder.embed([QUERY])[0]
    mean = (float(q @ vector) + float(q @ own)) / 2
    assert float(q @ own) > mean > float(q @ vector)  # its own words answer the question best
    r = recaller(store)
    assert len(corpus) + 1 > r.candidates  # L2 chooses candidates, it does not rank all
    r.cache.clear()
    r.preload_on_miss = False
    cold = await r.recall_traced(LENA, QUERY, k=3, record_access=False)
    assert cold.path == "l2"
    assert await r.preload(LENA) == len(corpus) + 1
    warm = await r.recall_traced(LENA, QUERY, k=3, record_access=False)
    assert warm.path == "l1"
    for found in (cold, warm):
        assert found.hits and found.hits[0].record.id == fact.id
        relevance = found.hits[0].breakdown.relevance
        assert relevance is not None and relevance.passed
        assert relevance.cosine == pytest.approx(mean, abs=1e-5)
    # A memory written while the user is cached enters L1 with the same rule. It is a copy of
    # `fact`: equal totals tie by id (random), and whichever of the two comes second follows
    # every distinct result, so only a k that returns everything is sure to hold it.
    (later,) = await store.write_many(LENA, [_fact()])
    everything = len(corpus) + 2
    again = await r.recall_traced(
        LENA, QUERY, k=everything, record_access=False, relevant_only=False
    )
    assert again.path == "l1"
    by_id = {h.record.id: h for h in again.hits}
    assert later.id in by_id
    later_relevance = by_id[later.id].breakdown.relevance
    assert later_relevance is not None and later_relevance.cosine == pytest.approx(mean, abs=1e-5)


async def test_the_migration_applies_to_a_database_with_rows(
    _pg_session: PostgresServer,
    tmp_data_dir: Path,
    embedding_model_dir: Path,
    chroma_server: ChromaServer,
) -> None:
    """Rows written before the column keep working: NULL is "the one vector is both"."""
    url = _pg_session.create_database()
    mid = new_id()
    vector = np.zeros(384, dtype=np.float32)
    vector[0] = 1.0  # what `write_before_migration` writes
    await write_before_migration(url, 11, [(mid, LENA, _fact())])  # the schema as it was
    try:
        settings = _settings(url, tmp_data_dir, embedding_model_dir, chroma_server.url)
        async with open_store(settings) as store:
            async with store.pool.acquire() as c:
                applied = await c.fetchval("SELECT max(version) FROM schema_migrations")
            assert applied == len(MIGRATIONS)
            old_vector, old_own = await _stored(store, mid)
            assert old_own is None and float(old_vector @ vector) == pytest.approx(1.0)
            found = await store.candidates(LENA, limit=10)
            assert found.complete and [r.id for r in found.records] == [mid]
            assert found.own is None  # no row has a vector of its own yet
            (new,) = await store.write_many(LENA, [_fact()])
            _, new_own = await _stored(store, new.id)
            assert new_own is not None
            r = Recaller(store)
            hits = await r.recall(LENA, QUERY, k=2, record_access=False, relevant_only=False)
            assert {h.record.id for h in hits} == {mid, new.id}
            # `memory-agent reindex` gives the old row its own-text vector; once only.
            version = await store.scope_version(LENA)
            assert await store.backfill_own_vectors(batch=1) == 1
            assert await store.backfill_own_vectors() == 0
            assert await store.scope_version(LENA) > version  # caches load the new vector
            _, filled = await _stored(store, mid)
            _, expected = await _stored(store, new.id)
            assert filled is not None and expected is not None
            assert float(filled @ expected) == pytest.approx(1.0, abs=1e-5)
    finally:
        _pg_session.drop_database(url.rsplit("/", 1)[-1])


async def test_an_edit_embeds_both_texts_again(store: MemoryStore) -> None:
    (fact,) = await store.write_many(LENA, [_fact()])
    edited = await replace_content(store, LENA, fact.id, "Gina is my brother's wife", reason="t")
    assert edited is not None
    vector, own = await _stored(store, fact.id)
    expected = store.embedder.embed([store.embed_text(edited), "user: Gina is my brother's wife"])
    assert own is not None and float(own @ expected[1]) == pytest.approx(1.0, abs=1e-5)
    assert float(vector @ expected[0]) == pytest.approx(1.0, abs=1e-5)
