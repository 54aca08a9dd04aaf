"""The Chroma vector index: embedded (`PersistentClient`) by default, a server with `CHROMA_URL`.

Chroma is an index, never the record: every entry here can be rebuilt from Postgres. An entry
is an id, a vector and filter metadata, never the memory's text: recall reads the text from
Postgres, and text sent to Chroma outlives its deletion in Chroma's own files (its write-ahead
log, its full-text index, and the server's freed memory, which its vector files are written
from). Nor does it name its owner: an entry's `owner` metadata is a keyed hash of tenant and
user (`owner_tag`, keyed by a random key kept in Postgres), so Chroma's files, logs and memory
hold no user's id either, and a log this process cannot reach (a remote server's) does not say
whom an entry belonged to. Every query filters on `owner`, except `nearest`'s unfiltered layers,
whose hits are marked unchecked for the caller to keep to the user's rows.

Chroma's Python client is blocking, so calls run in a worker thread (blocking calls are refused
inside `langgraph dev`).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import zlib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np

from memory.settings import Settings, apply_privacy_defaults
from memory.storage.chroma_lock import ChromaInUseError, claim_embedded
from memory.types import MemoryRecord, Scope

log = logging.getLogger(__name__)

LAYERS = ("episodic", "longterm")
# Image vectors from an optional image embedding model: another space (and dimension) than the
# text layers, so never queried with them; deleted with them.
IMAGE_LAYER = "images"
ALL_LAYERS = (*LAYERS, IMAGE_LAYER)


class VectorIndexError(RuntimeError):
    """Chroma is unreachable or refused an operation."""


@dataclass(frozen=True, slots=True)
class Nearest:
    """One layer's nearest entries for a query (`VectorIndex.nearest`), nearest first."""

    layer: str
    hits: list[tuple[str, float]]  # (memory id, cosine similarity)
    unchecked: bool = False  # searched without the owner filter: may hold other users' ids
    full: bool = False  # unchecked, and as many as asked for: the layer holds more


def _client(settings: Settings) -> Any:
    apply_privacy_defaults()
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
    if settings.chroma_url:
        url = urlparse(settings.chroma_url)
        return chromadb.HttpClient(
            host=url.hostname or "127.0.0.1",
            port=url.port or (443 if url.scheme == "https" else 8000),
            ssl=url.scheme == "https",
            settings=chroma_settings,
        )
    path = embedded_path(settings)
    claim_embedded(path)  # one process per folder: a second one would lose writes silently
    return chromadb.PersistentClient(path=str(path), settings=chroma_settings)


def embedded_path(settings: Settings) -> Path:
    """The folder of the embedded Chroma (used when `CHROMA_URL` is unset)."""
    return Path(settings.data_dir) / "chroma"


async def claim(settings: Settings) -> None:
    """Refuse now, with `ChromaInUseError`, an embedded Chroma another process has open.

    Opening is lazy; a store claims its folder when it opens so that a second process fails at
    once with a clear error instead of at its first write (where an outage would be assumed).
    """
    if not settings.chroma_url:
        await asyncio.to_thread(claim_embedded, embedded_path(settings))


OWNER_KEY_BYTES = 32
# Entries written before owners were hashed name them in these keys; `retag_legacy` rewrites them.
_LEGACY_KEYS = ("tenant_id", "user_id")
_PAGE = 5000  # entries per call: under Chroma's max batch size on every backend


def owner_tag(key: bytes, scope: Scope) -> str:
    """The owner of a Chroma entry as Chroma sees it: a keyed hash of tenant and user.

    Keyed, not a plain hash: user ids are often guessable (an email, a handle), and a plain
    hash of a guess would say whether that user has memories here.
    """
    data = f"{scope.tenant_id}\x00{scope.user_id}".encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, key=key, digest_size=16).hexdigest()


def text_digest(key: bytes, text: str) -> str:
    """A keyed 64-bit digest of `text`, for audit events that name what they refused.

    Keyed by the installation's key (`person` keeps it apart from owner tags): with a plain hash,
    anyone who reads the audit log could confirm a guess of a short refused text offline ("my
    pin is 1234"); with the key, only the server can match a complaint to an event.
    """
    data = text.encode("utf-8", "replace")
    return hashlib.blake2b(data, key=key, digest_size=8, person=b"lma-audit-text").hexdigest()


def shard_of(scope: Scope, shards: int) -> int:
    """The shard (collection) a user's entries live in: a stable hash of tenant and user."""
    if shards <= 1:
        return 0
    return zlib.crc32(f"{scope.tenant_id}\x00{scope.user_id}".encode()) % shards


class VectorIndex:
    """Chroma collections per layer (episodic, long-term, images), cosine space, our vectors.

    With `chroma_shards` > 1 each layer is split into that many collections and a user's entries
    all live in the one their tenant and user hash to: a query then filters a collection of
    1/shards of the entries. Measured with 100,000 vectors of 1,000 users, top 200 (see
    `bench/chroma_layout.py`): 16 shards p50 64 ms / p95 83 ms against one collection's 212 ms /
    626 ms, at the same resident memory, ingesting 3.3x faster; at 20,000 vectors of 200 users a
    collection per user was as fast as 16 shards but took 2.5x the memory.
    """

    def __init__(self, settings: Settings, *, owner_key: bytes) -> None:
        if len(owner_key) != OWNER_KEY_BYTES:
            raise ValueError(f"the owner key must be {OWNER_KEY_BYTES} bytes")
        self._settings = settings
        self._owner_key = owner_key
        # Until the store has seen this prefix's entries retagged (`retag_legacy`, once per
        # installation), deletions also look for entries that still name tenant and user.
        self.legacy_owners = True
        self._client: Any = None
        self._collections: dict[str, Any] = {}
        self._shards = max(1, settings.chroma_shards)

    def text_digest(self, text: str) -> str:
        """`text_digest` under this installation's key."""
        return text_digest(self._owner_key, text)

    @property
    def settings(self) -> Settings:
        """Where this index lives (embedded folder or server URL)."""
        return self._settings

    def collection_name(self, layer: str, shard: int = 0) -> str:
        """The collection of `layer` (and shard); one shard keeps the unsharded names.

        Only the text layers are sharded: image vectors (optional, few) keep one collection.
        """
        base = f"{self._settings.chroma_prefix}_{layer}"
        if self._shards == 1 or layer not in LAYERS:
            return base
        return f"{base}_{self._shards}s{shard:03d}"

    def current_collections(self) -> set[str]:
        """The names of every collection of the configured layout."""
        names = {self.collection_name(IMAGE_LAYER)}
        for layer in LAYERS:
            names |= {self.collection_name(layer, shard) for shard in range(self._shards)}
        return names

    async def other_layouts(self) -> list[str]:
        """The text collections of this prefix with another shard count (a layout change's)."""
        return list(await self._run(self._other_layouts, False))

    async def drop_other_layouts(self) -> list[str]:
        """Delete this prefix's text collections of another shard count; their names.

        After the shard count changes, the old collections hold entries the new layout never
        reads, deletes or forgets: they must go once the rows are reindexed into the new ones.
        """
        return list(await self._run(self._other_layouts, True))

    def _other_layouts(self, drop: bool) -> list[str]:
        prefix = re.escape(self._settings.chroma_prefix)
        pattern = re.compile(rf"^{prefix}_(?:{'|'.join(LAYERS)})(?:_\d+s\d{{3}})?$")
        if self._client is None:
            self._client = _client(self._settings)
        keep = self.current_collections()
        names = [c if isinstance(c, str) else c.name for c in self._client.list_collections()]
        gone = [n for n in names if pattern.match(n) and n not in keep]
        if drop:
            for name in gone:
                self._client.delete_collection(name)
        return gone

    async def retag_legacy(self) -> int:
        """Rewrite entries an older version wrote (named owner, text); how many.

        Pages through each existing collection of the configured layout and rewrites, in
        place, every entry whose metadata names `tenant_id` and `user_id` (they become the
        owner's tag) or whose document holds text (it becomes empty). In place, not from
        Postgres: image vectors exist only here. The store runs this once per prefix (see
        `MemoryStore.ensure_layout`).
        """
        return int(await self._run(self._retag_legacy))

    def _retag_legacy(self) -> int:
        if self._client is None:
            self._client = _client(self._settings)
        existing = {c if isinstance(c, str) else c.name for c in self._client.list_collections()}
        rewritten = 0
        for name in sorted(self.current_collections() & existing):
            collection = self._client.get_collection(name, embedding_function=None)
            offset = 0
            while True:
                page = collection.get(
                    include=["metadatas", "documents", "embeddings"], limit=_PAGE, offset=offset
                )
                ids = page["ids"]
                metas = page["metadatas"] or [None] * len(ids)
                docs = page["documents"] or [None] * len(ids)
                stale: dict[str, tuple[Any, dict[str, Any]]] = {}
                unowned: list[str] = []
                for i, (entry, meta) in enumerate(zip(ids, metas, strict=True)):
                    named = bool(meta) and any(k in meta for k in _LEGACY_KEYS)
                    if not named and not docs[i]:
                        continue
                    new_meta = dict(meta or {})
                    if named:
                        try:
                            owner = Scope(str(new_meta["tenant_id"]), str(new_meta["user_id"]))
                        except (KeyError, ValueError):
                            unowned.append(entry)  # no one's: nothing could ever find it
                            continue
                        new_meta = {**self._owned(owner), **dict.fromkeys(_LEGACY_KEYS)}
                    stale[entry] = (page["embeddings"][i], new_meta)
                if stale:
                    # Chroma embeds a document sent without its vector: send the vector back.
                    collection.update(
                        ids=list(stale),
                        embeddings=[v for v, _ in stale.values()],
                        metadatas=[m for _, m in stale.values()],
                        documents=["" for _ in stale],
                    )
                if unowned:
                    collection.delete(ids=unowned)
                    log.warning("dropped %d Chroma entries of %s with no owner", len(unowned), name)
                rewritten += len(stale)
                if len(ids) < _PAGE:
                    break
                offset += len(ids) - len(unowned)
        return rewritten

    def _collection(self, layer: str, shard: int = 0) -> Any:
        name = self.collection_name(layer, shard)
        if name not in self._collections:
            if self._client is None:
                self._client = _client(self._settings)
            self._collections[name] = self._client.get_or_create_collection(
                name, metadata={"hnsw:space": "cosine"}, embedding_function=None
            )
        return self._collections[name]

    def _shard(self, scope: Scope) -> int:
        return shard_of(scope, self._shards)

    def _owned(self, scope: Scope) -> dict[str, Any]:
        return {"owner": owner_tag(self._owner_key, scope)}

    def _owned_or_legacy(self, scope: Scope) -> dict[str, Any]:
        # For deletions and audits: an entry not yet retagged (Chroma was down when the store
        # opened) must still be found, or a deletion would leave it behind. Only then does a
        # filter send Chroma the ids.
        if not self.legacy_owners:
            return self._owned(scope)
        legacy = {"$and": [{"tenant_id": scope.tenant_id}, {"user_id": scope.user_id}]}
        return {"$or": [self._owned(scope), legacy]}

    def _metadata(self, record: MemoryRecord) -> dict[str, Any]:
        return {
            **self._owned(record.scope),
            "kind": record.kind.value,
            "occurred_at": int(record.occurred_at.timestamp()),
            "importance": float(record.importance),
        }

    def _forget_client(self) -> None:
        # After a failure (server restarted, connection reset) reconnect on the next call.
        self._client = None
        self._collections.clear()

    async def connect(self) -> bool:
        """Open the text layers' collections in a worker thread; False (logged) if Chroma is down.

        The index connects lazily, and a later call may look a collection up on the event loop:
        connecting here first keeps that blocking I/O off the loop (`langgraph dev` refuses it).
        A Chroma outage is not fatal, Postgres is the record: the client is forgotten so the next
        call reconnects.
        """
        try:
            # One collection per layer proves Chroma answers; the other shards open on first use
            # (inside the worker thread, like every call).
            await asyncio.to_thread(lambda: [self._collection(layer) for layer in LAYERS])
        except ChromaInUseError:
            raise
        except Exception as exc:
            self._forget_client()
            log.warning("Chroma unavailable: %s", exc)
            return False
        return True

    async def _run(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return await asyncio.to_thread(fn, *args, **kwargs)
        except ChromaInUseError:
            raise  # not an outage to wait out: the operator must choose a Chroma server
        except Exception as exc:
            self._forget_client()
            raise VectorIndexError(f"Chroma operation failed: {exc}") from exc

    async def _call(self, layer: str, scope: Scope, method: str, **kwargs: Any) -> Any:
        # Resolving the collection may connect (blocking I/O): do it in the worker thread too.
        shard = self._shard(scope) if layer in LAYERS else 0
        return await self._run(lambda: getattr(self._collection(layer, shard), method)(**kwargs))

    async def upsert(self, records: Sequence[MemoryRecord], vectors: np.ndarray) -> None:
        """Index records (grouped by layer and shard) with their precomputed vectors."""
        groups: dict[tuple[str, int], list[tuple[MemoryRecord, np.ndarray]]] = {}
        for record, vector in zip(records, vectors, strict=True):
            key = (record.kind.layer, self._shard(record.scope))
            groups.setdefault(key, []).append((record, vector))
        for (layer, shard), rows in groups.items():
            if layer in LAYERS:
                await self._run(self._upsert_layer, layer, shard, rows)

    def _upsert_layer(
        self, layer: str, shard: int, rows: list[tuple[MemoryRecord, np.ndarray]]
    ) -> None:
        # Batches of 5,000 stay under Chroma's max batch size on every backend.
        for start in range(0, len(rows), 5000):
            chunk = rows[start : start + 5000]
            self._collection(layer, shard).upsert(
                ids=[r.id for r, _ in chunk],
                embeddings=[v.tolist() for _, v in chunk],
                # Empty, not omitted: an upsert without documents keeps the text an older
                # version of this project stored there.
                documents=["" for _ in chunk],
                metadatas=[self._metadata(r) for r, _ in chunk],
            )

    async def upsert_vectors(
        self, layer: str, scope: Scope, ids: Sequence[str], vectors: np.ndarray
    ) -> None:
        """Index bare vectors of one user's memories in `layer` (no document)."""
        meta = self._owned(scope)
        await self._call(
            layer,
            scope,
            "upsert",
            ids=list(ids),
            embeddings=[v.tolist() for v in vectors],
            metadatas=[dict(meta) for _ in ids],
        )

    async def upsert_many_users(
        self, layer: str, owners: Sequence[Scope], ids: Sequence[str], vectors: np.ndarray
    ) -> None:
        """Index bare vectors of many users' memories in `layer`, in batches of 5,000 per shard.

        For bulk loads: one call per user costs a round trip each (10,000 users, minutes).
        """
        groups: dict[int, list[int]] = {}
        for i, owner in enumerate(owners):
            groups.setdefault(self._shard(owner), []).append(i)
        for shard, rows in groups.items():
            for start in range(0, len(rows), 5000):
                chunk = rows[start : start + 5000]
                await self._run(
                    lambda shard=shard, chunk=chunk: self._collection(layer, shard).upsert(
                        ids=[ids[i] for i in chunk],
                        embeddings=vectors[chunk],
                        metadatas=[self._owned(owners[i]) for i in chunk],
                    )
                )

    async def held(self, records: Sequence[MemoryRecord]) -> set[str]:
        """The ids of `records` Chroma holds: read back by id, with a vector and their owner.

        An upsert that returned is not proof: an embedded Chroma another process also wrote,
        or a server wiped or restarted on an empty folder, answers without keeping the entry.
        Reading back by id costs one `get` per layer and shard touched, in pages of 5,000:
        measured (loaded 2-core machine) 2 ms after a 45 ms upsert of one memory on embedded
        Chroma, 6 ms after 62 ms on a `chroma run` server; 61 / 170 ms after 500 memories.
        """
        groups: dict[tuple[str, int], list[MemoryRecord]] = {}
        for record in records:
            groups.setdefault((record.kind.layer, self._shard(record.scope)), []).append(record)
        found: set[str] = set()
        for (layer, shard), rows in groups.items():
            try:
                found |= await self._run(self._held_in, layer, shard, rows)
            except VectorIndexError:
                # A handle from before Chroma restarted or lost the collection fails once;
                # reading is harmless to repeat, so ask again on a fresh connection.
                found |= await self._run(self._held_in, layer, shard, rows)
        return found

    def _held_in(self, layer: str, shard: int, rows: list[MemoryRecord]) -> set[str]:
        owners = {r.id: self._owned(r.scope)["owner"] for r in rows}
        found: set[str] = set()
        for start in range(0, len(rows), _PAGE):
            page = self._collection(layer, shard).get(
                ids=[r.id for r in rows[start : start + _PAGE]],
                include=["embeddings", "metadatas"],
            )
            vectors = page["embeddings"]
            metas = page["metadatas"] or [None] * len(page["ids"])
            for i, (entry, meta) in enumerate(zip(page["ids"], metas, strict=True)):
                has_vector = vectors is not None and len(vectors[i]) > 0
                if has_vector and meta and meta.get("owner") == owners.get(entry):
                    found.add(entry)
        return found

    async def query(
        self, scope: Scope, vector: np.ndarray, *, k: int, layers: Sequence[str] = LAYERS
    ) -> list[tuple[str, float]]:
        """Nearest ids for one user, with cosine similarity, across the given layers."""
        hits: list[tuple[str, float]] = []
        for layer in layers:
            result = await self._call(
                layer,
                scope,
                "query",
                query_embeddings=[vector.tolist()],
                n_results=k,
                where=self._owned(scope),
                include=["distances"],
            )
            for mid, dist in zip(result["ids"][0], result["distances"][0], strict=True):
                hits.append((mid, 1.0 - float(dist)))
        hits.sort(key=lambda h: h[1], reverse=True)
        return hits[:k]

    async def nearest(
        self,
        scope: Scope,
        vector: np.ndarray,
        *,
        k: int,
        unfiltered: Collection[str] = (),
        layers: Sequence[str] = LAYERS,
        fetch: Mapping[str, int] | None = None,
    ) -> list[Nearest]:
        """The nearest entries of each layer for one user's query, the layers side by side.

        A `where`-filtered search costs in proportion to the entries the filter matches: for a
        user with 200,000 memories over a second per query on a shared 2-core machine. The
        layers in `unfiltered` (those where the user holds most of their shard) are searched
        without the filter and without metadata for the 2k nearest entries: ~10 ms, against
        ~25 ms for the same search returning each entry's owner. Those hits are `unchecked`:
        they may be other users' entries, and the caller must keep only the user's own, which
        it does anyway when it reads their rows from Postgres by owner. `full` says the layer
        returned all it was asked for, so it may hold more of the user's entries than were seen.
        `fetch` is how many entries to ask of an unfiltered layer (k to 2k, default 2k): fewer
        where the user holds nearly all of it.
        """

        async def one(layer: str) -> Nearest:
            if layer not in unfiltered:
                return Nearest(layer, await self.query(scope, vector, k=k, layers=[layer]))
            n = min(2 * k, max(k, (fetch or {}).get(layer, 2 * k)))
            result = await self._call(
                layer,
                scope,
                "query",
                query_embeddings=[vector.tolist()],
                n_results=n,
                include=["distances"],
            )
            ids, dists = result["ids"][0], result["distances"][0]
            hits = [(mid, 1.0 - float(d)) for mid, d in zip(ids, dists, strict=True)]
            return Nearest(layer, hits, unchecked=True, full=len(hits) >= n)

        return list(await asyncio.gather(*(one(layer) for layer in layers)))

    async def delete(self, scope: Scope, ids: Sequence[str]) -> None:
        """Remove entries by id, only where they belong to `scope`."""
        if not ids:
            return
        for layer in ALL_LAYERS:
            # Check ownership by id (fast), then delete by id: a delete filtered by `where`
            # scans the collection (52 ms vs 5.6 ms at 10,000 entries).
            owned = await self._call(
                layer, scope, "get", ids=list(ids), where=self._owned_or_legacy(scope)
            )
            if owned["ids"]:
                await self._call(layer, scope, "delete", ids=owned["ids"])

    async def delete_scope(self, scope: Scope) -> int:
        """Remove every entry of one user; return how many there were."""
        removed = 0
        for layer in ALL_LAYERS:
            where = self._owned_or_legacy(scope)
            found = await self._call(layer, scope, "get", where=where, include=[])
            if found["ids"]:
                await self._call(layer, scope, "delete", ids=found["ids"])
                removed += len(found["ids"])
        return removed

    async def count_scope(self, scope: Scope) -> int:
        """How many entries one user has in the index."""
        total = 0
        for layer in ALL_LAYERS:
            where = self._owned_or_legacy(scope)
            found = await self._call(layer, scope, "get", where=where, include=[])
            total += len(found["ids"])
        return total

    async def documents_for(self, scope: Scope) -> list[tuple[str, str, dict[str, Any]]]:
        """Every (id, document, metadata) of one user: for audits and tests of deletion.

        The document is empty for every entry this version wrote; text here was stored by an
        older version of this project and goes when the store next opens (`retag_legacy`).
        """
        out: list[tuple[str, str, dict[str, Any]]] = []
        for layer in ALL_LAYERS:
            found = await self._call(
                layer,
                scope,
                "get",
                where=self._owned_or_legacy(scope),
                include=["documents", "metadatas"],
            )
            docs = [d or "" for d in found["documents"]]
            out.extend(zip(found["ids"], docs, found["metadatas"], strict=True))
        return out
