"""Chroma never learns whose memories it indexes: no user id, tenant id or text reaches it.

Real Postgres and a real `chroma run` server. An entry's owner is a keyed hash of tenant and user
(the key lives in Postgres), so the server's files hold neither the ids nor the words, before or
after a deletion. Entries an older version wrote with `tenant_id`/`user_id` metadata and the
memory's text, text and image layers alike, are rewritten in place the next time the store
opens, and until then a deletion still finds them.
"""

from __future__ import annotations

import uuid

import numpy as np

from memory.settings import Settings
from memory.storage.forget import forget_user
from memory.storage.store import MemoryStore, open_store, owner_key
from memory.storage.vector import IMAGE_LAYER, owner_tag
from memory.system import recaller
from memory.types import MemoryKind, NewMemory, Scope
from tests.support.chroma_server import ChromaServer
from tests.support.secured import files_holding


def _someone() -> tuple[Scope, str]:
    tag = uuid.uuid4().hex[:8]
    return Scope(f"tenant-{tag}", f"person-{tag}"), f"Marzipolt{tag}"


async def _metadata(store: MemoryStore, scope: Scope) -> list[dict[str, object]]:
    return [dict(meta) for _, _, meta in await store.index.documents_for(scope)]


def test_the_owner_tag_is_keyed_and_tells_owners_apart() -> None:
    key, other = b"k" * 32, b"o" * 32
    ann, bob = Scope("acme", "ann"), Scope("acme", "bob")
    assert owner_tag(key, ann) == owner_tag(key, Scope("acme", "ann"))
    assert len({owner_tag(key, ann), owner_tag(key, bob), owner_tag(other, ann)}) == 3
    assert owner_tag(key, Scope("a-b", "c")) != owner_tag(key, Scope("a", "b-c"))
    assert "ann" not in owner_tag(key, ann) and "acme" not in owner_tag(key, ann)


async def test_chroma_holds_no_id_and_no_text_of_a_user(
    readable_settings: Settings, chroma_server: ChromaServer
) -> None:
    who, mark = _someone()
    async with open_store(readable_settings) as store:
        records = [
            await store.write(who, NewMemory(f"my bike lock code word is {mark}", kind))
            for kind in (MemoryKind.EPISODIC, MemoryKind.PREFERENCE)
        ]
        vector = np.ones((1, 8), dtype=np.float32) / np.sqrt(8)
        await store.index.upsert_vectors(IMAGE_LAYER, who, [records[0].id], vector)
        # Indexed, found by owner, and recalled through Chroma (the L2 path).
        assert {i for i, _, _ in await store.index.documents_for(who)} == {r.id for r in records}
        assert await store.index.count_scope(who) == 3
        tag = owner_tag(await owner_key(store.pool), who)
        assert {m["owner"] for m in await _metadata(store, who)} == {tag}
        found = await recaller(store).recall_traced(who, "what is my bike lock code word?", k=3)
        assert found.hits and found.hits[0].record.id in {r.id for r in records}
    needles = [who.tenant_id, who.user_id, mark]
    assert files_holding(chroma_server.path, needles) == []
    async with open_store(readable_settings) as store:  # the key is kept: the same owner next time
        assert await store.index.count_scope(who) == 3
        receipt = await forget_user(store, who)
        assert receipt.counts["chroma"] == 3 and await store.index.count_scope(who) == 0
    assert files_holding(chroma_server.path, needles) == []


async def _legacy_entry(
    store: MemoryStore, layer: str, scope: Scope, entry: str, text: str | None = None
) -> None:
    # What an older version wrote: the ids in the metadata, the memory's text as the document.
    await store.index._call(
        layer,
        scope,
        "upsert",
        ids=[entry],
        embeddings=[[1.0 / np.sqrt(384)] * 384 if layer != IMAGE_LAYER else [0.5] * 4],
        metadatas=[{"tenant_id": scope.tenant_id, "user_id": scope.user_id}],
        documents=[text] if text else None,
    )


async def test_entries_that_name_their_owner_are_retagged_and_never_missed(
    readable_settings: Settings,
) -> None:
    who, mark = _someone()
    async with open_store(readable_settings) as store:
        kept = await store.write(who, NewMemory(f"I keep my spare key at {mark}"))
        # Rewritten as an old version wrote it.
        await _legacy_entry(store, "episodic", who, kept.id, kept.content)
        await _legacy_entry(store, IMAGE_LAYER, who, "legacy-image")
        await _legacy_entry(store, "episodic", who, "legacy-doomed")
        async with store.pool.acquire() as conn:
            await conn.execute(
                "UPDATE index_layouts SET owner_tags = false WHERE prefix = $1",
                readable_settings.chroma_prefix,
            )
    # Opened without the layout check, as when Chroma is down at start-up: nothing retagged.
    async with open_store(readable_settings, migrate_layout=False) as store:
        assert store.index.legacy_owners
        legacy = await _metadata(store, who)
        assert sum("user_id" in m for m in legacy) == 3
        assert any(mark in d for _, d, _ in await store.index.documents_for(who))
        # Before the rewrite a deletion still finds an entry that names its owner.
        await store.index.delete(who, ["legacy-doomed"])
        assert "legacy-doomed" not in {i for i, _, _ in await store.index.documents_for(who)}
        # What opening runs: one pass over the collections, then never again.
        assert await store.ensure_layout() == (0, [])
        assert not store.index.legacy_owners  # filters name the owner's tag only from now on
        meta = await _metadata(store, who)
        assert len(meta) == 2 and all(set(m) & {"tenant_id", "user_id"} == set() for m in meta)
        assert {m["owner"] for m in meta} == {owner_tag(await owner_key(store.pool), who)}
        assert {d for _, d, _ in await store.index.documents_for(who)} == {""}
        assert await store.index.retag_legacy() == 0
        async with store.pool.acquire() as conn:
            assert await conn.fetchval(
                "SELECT owner_tags FROM index_layouts WHERE prefix = $1",
                readable_settings.chroma_prefix,
            )
        # Found by the owner filter a query uses (the entry now only says `owner`).
        vector = (await store.embedder.aembed([kept.content]))[0]
        assert [h[0] for h in await store.index.query(who, vector, k=3)] == [kept.id]
        receipt = await forget_user(store, who)
        assert receipt.counts["chroma"] == 2 and await store.index.count_scope(who) == 0
