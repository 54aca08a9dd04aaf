"""MemoryStore: Postgres is the system of record, Chroma the index, every call scoped.

Write path: embed → insert the row (with its vector and `indexed_at = NULL`) and its audit event
in one transaction → upsert into Chroma → set `indexed_at`. With `index_in_background` the upsert
is queued (`memory.storage.indexer`) and the write returns once Postgres has the row; recall finds
unindexed rows meanwhile. If Chroma is down, or the process dies with upserts queued, the row is
kept and `reindex()` (run at start-up, when Chroma returns, and by `memory-agent reindex`)
indexes it later: nothing is lost.

Every change is one transaction with its audit event and a bump of the user's version counter
(`scope_versions`), so other processes' caches reload. Caches held above storage in this process
(the recall index) register with `store.cache` and are told of each change as it is made.
Ranking is not done here: recall asks for a user's rows and vectors (`active_memories`) and
ranks them itself.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import re
import time
from collections.abc import AsyncIterator, Collection, Coroutine, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

import numpy as np

from memory.citations import neutralised
from memory.settings import Settings
from memory.storage.access_log import AccessLog
from memory.storage.calibration import CosineScale, scale_for
from memory.storage.calibrations import ensure_scale
from memory.storage.compaction import Compaction
from memory.storage.db import Connection, Database, Row
from memory.storage.deletion_outbox import enqueue, has_chroma_work, owed, retry_chroma
from memory.storage.embedding import Embedder, Vectors, embed_text, get_embedder, own_text
from memory.storage.indexer import DEFAULT_LINGER_S, BackgroundIndexer
from memory.storage.pg import database_url, open_pool
from memory.storage.rows import (
    INSERT_SQL,
    LOCK_IN_ID_ORDER,
    RECORD_COLUMNS,
    insert_params,
    new_id,
    record_from_row,
    vector_from_bytes,
    vector_to_bytes,
)
from memory.storage.threads import ThreadRegistry
from memory.storage.tombstones import lock_users_shared
from memory.storage.vector import OWNER_KEY_BYTES, VectorIndex, VectorIndexError, claim
from memory.types import MemoryKind, MemoryRecord, NewMemory, Scope, Status

log = logging.getLogger(__name__)

MAX_CONTENT_CHARS = 20_000

# A Postgres lexical query term: letters and digits only (a word, or a word stem followed by a
# prefix match), so no text a user typed is ever parsed as tsquery syntax.
_TSQUERY_TERM = re.compile(r"^[^\W_]{1,64}$")
MAX_LEXICAL_TERMS = 32
MAX_WORD_FORMS = 16  # exact forms of one query word (`a|b|c`)
# The lexical recall leg ranks at most this many matches of one query term, and of all terms
# together, per candidate asked for (`candidates`): bounded work for a user of any size.
LEXICAL_PER_TERM = 2
LEXICAL_RANKED = 10
# A row's words keyed by its owner, exactly as the `memories_own_tsv` index computes them (the
# planner uses an index on an expression only for that same expression).
OWN_TSV = "lma_owner_tsv(left(md5(tenant_id || ' ' || user_id), 8), content || ' ' || context)"
# One word `w.word` of a `_tsquery_terms` term (a word, or a stem ending in `:*`) as a tsquery
# on `OWN_TSV`: the owner's digest ($10) before the word, lower-cased as `to_tsvector` does.
# Words are letters and digits only, so quoting them cannot inject tsquery syntax.
_OWN_TERM = (
    "(quote_literal($10 || lower(split_part(w.word, ':', 1)))"
    " || CASE WHEN w.word LIKE '%:*' THEN ':*' ELSE '' END)::tsquery"
)
# One user's active, unexpired rows ($1 tenant, $2 user), as each recall-candidate leg selects.
_MINE = (
    "tenant_id = $1 AND user_id = $2 AND status = 'active'"
    " AND (expires_at IS NULL OR expires_at > now())"
)
# The same rows for a lookup in an index already keyed by owner (`OWN_TSV`, `cjk_grams`): the
# owner is checked row by row (the digest could be shared), written so that the planner does
# not also read the owner's index. It otherwise ANDs the two bitmaps, and the owner's holds
# every row of theirs: 5-7 ms per query word for a user with 200,000 memories, for nothing.
_MINE_BY_ROW = (
    "(tenant_id, user_id) IS NOT DISTINCT FROM ($1, $2) AND status = 'active'"
    " AND (expires_at IS NULL OR expires_at > now())"
)

# The dense leg's rows (`MemoryStore.nearest_rows`): $3 ids known to be the user's; $4 / $5 ids
# from unfiltered searches and the list (layer) each came from, nearest first; $6 how many of
# the user's to take per list. Each id is looked up on its own (a LATERAL subquery that the
# planner may not merge: `OFFSET 0`), by primary key, its owner checked on the row
# (`_MINE_BY_ROW`: the owner's index cannot be chosen), in any plan. Joined with the user's
# rows instead, the ids were read, for a user the planner takes for smaller than they are
# (stale statistics, a user far above the average), against all the user's rows: 40 ms for 900
# memories, against 2 ms by id. And after five calls on a connection Postgres may keep one plan
# for all values, made for the average user; such a plan intersected the owner's index (all
# 200,000 entries of a large user) with the ids, even for no ids: ~12 ms a call, ~6 by id.
# Each lookup returns the whole row, so each id is read once: the rows a list does not keep
# are dropped before any of their values is sent, or detoasted. Picking the ids first and
# reading the picked rows again by id cost a second primary-key read per row: for the
# 200,000-memory user's ~400 hits, p50 / p95 9.1 / 14.8 ms against 7.6 / 8.9 (same run,
# alternating). A row both branches return (an id in two layers' hits) is kept once by the
# caller.
_NEAREST_COLUMNS = f"{RECORD_COLUMNS}, embedding, own_embedding, recall_features"
NEAREST_ROWS_SQL = f"""
    SELECT {_NEAREST_COLUMNS} FROM (
        SELECT m.*, row_number() OVER (PARTITION BY d.list ORDER BY d.pos) AS n
        FROM unnest($4::text[], $5::int[]) WITH ORDINALITY AS d (id, list, pos)
        CROSS JOIN LATERAL (
            SELECT {_NEAREST_COLUMNS} FROM memories
            WHERE id = d.id AND {_MINE_BY_ROW} OFFSET 0
        ) m
    ) dense WHERE n <= $6
    UNION ALL
    SELECT m.* FROM unnest($3::text[]) AS c (id)
    CROSS JOIN LATERAL (
        SELECT {_NEAREST_COLUMNS} FROM memories WHERE id = c.id AND {_MINE_BY_ROW} OFFSET 0
    ) m
"""

# Chroma probe after a failed call: first retry after 1 s, doubling up to 30 s, so an outage
# costs a few cheap requests a minute and a restart is noticed within 30 s.
PROBE_FIRST_S = 1.0
PROBE_MAX_S = 30.0


class MemoryInputError(ValueError):
    """A memory that cannot be stored as given (empty, too large, not text)."""


class AmbiguousIdError(MemoryInputError):
    """A short id that begins more than one of the user's memory ids."""


# A short id is at least this many hex digits: the CLI and the prompts show 8, and fewer would
# name several memories of anyone who has a few thousand.
MIN_ID_PREFIX = 4
_HEX = frozenset("0123456789abcdef")


def _check_content(item: NewMemory) -> None:
    if not isinstance(item.content, str) or not item.content.strip():
        raise MemoryInputError("memory content must be non-empty text")
    if len(item.content) > MAX_CONTENT_CHARS:
        raise MemoryInputError(
            f"memory content is {len(item.content):,} characters; the limit is "
            f"{MAX_CONTENT_CHARS:,} (store a summary, keep the original elsewhere)"
        )
    if "\x00" in item.content or "\x00" in item.context:
        raise MemoryInputError("memory content contains NUL characters")


class RowCache(Protocol):
    """An in-process cache of some of a store's rows, kept by a layer above storage."""

    def written(
        self,
        scope: Scope,
        records: Sequence[MemoryRecord],
        vectors: Vectors,
        version: int,
        own: Vectors | None = None,
    ) -> None:
        """Note `records` (and vectors) written by this process; the user is now at `version`.

        `own` are their own-text vectors (a row equal to `vectors`' where a memory has none).
        """
        ...

    def invalidate(self, scope: Scope) -> None:
        """Forget what is held for `scope`."""
        ...

    def clear(self) -> None:
        """Forget everything."""
        ...


class StoreCaches:
    """The caches registered on a store, told of every change this process makes through it."""

    def __init__(self) -> None:
        self.caches: list[RowCache] = []

    def add(self, cache: RowCache) -> None:
        """Register a cache."""
        self.caches.append(cache)

    def written(
        self,
        scope: Scope,
        records: Sequence[MemoryRecord],
        vectors: Vectors,
        version: int,
        own: Vectors | None = None,
    ) -> None:
        """Tell every cache about a write."""
        for cache in self.caches:
            cache.written(scope, records, vectors, version, own)

    def invalidate(self, scope: Scope) -> None:
        """Drop `scope` from every cache."""
        for cache in self.caches:
            cache.invalidate(scope)

    def clear(self) -> None:
        """Empty every cache."""
        for cache in self.caches:
            cache.clear()


class _EmbeddingMemo:
    """Empties the embedder's memo of recent texts when a user's memories change.

    A forget changes them too: no forgotten text stays in this process beside its vector.
    """

    def __init__(self, embedder: Embedder) -> None:
        self.memo = getattr(embedder, "memo", None)

    def written(
        self,
        scope: Scope,
        records: Sequence[MemoryRecord],
        vectors: Vectors,
        version: int,
        own: Vectors | None = None,
    ) -> None:
        """A write forgets nothing."""

    def invalidate(self, scope: Scope) -> None:
        """A change or a forget: drop every held text (the memo is not kept per user)."""
        self.clear()

    def clear(self) -> None:
        """Drop every held text."""
        if self.memo is not None:
            self.memo.clear()


class IndexHealth:
    """Chroma's availability as this process saw it, for logs and metrics."""

    def __init__(self) -> None:
        self.down_since: float | None = None  # monotonic time of the first failure, or None
        self.outages = 0  # times Chroma went from answering to failing
        self.recoveries = 0  # times the probe saw it answer again
        self.caught_up = 0  # memories indexed by the catch-up after a recovery

    @property
    def down(self) -> bool:
        """Whether the last call to Chroma failed (and no probe has seen it back since)."""
        return self.down_since is not None


@dataclass(frozen=True, slots=True)
class Candidates:
    """Rows that may answer a query, with their vectors and stored recall features."""

    records: list[MemoryRecord]
    vectors: Vectors
    features: list[Any]  # each row's stored `recall_features` (JSON), or None
    complete: bool  # every active row of the user is here
    # Own-text vectors, row for row; a memory without one has its `vectors` row here. None:
    # the same as `vectors`.
    own: Vectors | None = None
    # Of the `terms` looked up (`MemoryStore.candidates`), those the user has at least
    # `saturation_matches` matches of: as many as one word's lookup ever reads.
    saturated: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class AuditEvent:
    """One audit event to append (`MemoryStore.record_events`)."""

    memory_id: str | None
    event: str
    reason: str
    detail: dict[str, Any]


def cjk_owner(scope: Scope) -> str:
    """The owner prefix of a user's `cjk_grams` and `OWN_TSV` entries (as their SQL computes it)."""
    owner = f"{scope.tenant_id} {scope.user_id}".encode()
    return hashlib.md5(owner, usedforsecurity=False).hexdigest()[:8]


class MemoryStore:
    """Scoped reads and writes of memories. Create with `open_store()`.

    Every public method takes the Scope first; none can omit it.
    """

    def __init__(
        self,
        pool: Database,
        index: VectorIndex,
        embedder: Embedder,
        *,
        index_in_background: bool = False,
        index_linger_s: float = DEFAULT_LINGER_S,
    ) -> None:
        """`index_in_background`: writes return before Chroma has the rows (see the module)."""
        self.pool = pool
        self.index = index
        self.embedder = embedder
        self.indexer: BackgroundIndexer | None = (
            BackgroundIndexer(self.index_batch, self.reindex, linger_s=index_linger_s)
            if index_in_background
            else None
        )
        self.cache = StoreCaches()
        self.cache.add(_EmbeddingMemo(embedder))
        self.threads = ThreadRegistry(pool)
        self.cache.add(self.threads)
        self.access_log = AccessLog(pool)
        self._background: set[asyncio.Task[Any]] = set()
        # True until the outbox is known to hold no Chroma deletion: the first check looks.
        self._deletions_owed = True
        self.index_health = IndexHealth()
        self._probe: asyncio.Task[None] | None = None
        # VACUUM/CHECKPOINT after deletions, at most one pass per interval (`compaction`).
        self.compaction = Compaction(pool, index.settings)

    # -- background work ---------------------------------------------------------------------

    @property
    def scale(self) -> CosineScale:
        """The embedder's cosine scale (`storage.calibration`), measured here if not yet held.

        Every cosine this store's callers compare with a threshold is mapped through it first.
        """
        return scale_for(self.embedder)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Run work off the hot path, keeping a reference so it is awaited on close."""
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def drain(self) -> None:
        """Wait for background work (queued index upserts, access statistics) to finish."""
        while True:
            if self._background:
                await asyncio.gather(*list(self._background), return_exceptions=True)
            await self.access_log.flush()
            if self.indexer is not None:
                await self.indexer.flush()
            if not self._background:
                break

    async def close(self) -> None:
        """Finish background work and stop watching for Chroma's return."""
        await self.drain()
        await self.compaction.close()
        await self.access_log.close()
        if self.indexer is not None:
            await self.indexer.close()
        if self._probe is not None:
            self._probe.cancel()
            await asyncio.gather(self._probe, return_exceptions=True)
            self._probe = None

    # -- Chroma's availability ---------------------------------------------------------------

    def index_failed(self, exc: BaseException) -> None:
        """Note a failed Chroma call: log the outage once and probe for Chroma's return.

        Postgres keeps every write meanwhile (`indexed_at IS NULL`); when the probe sees Chroma
        answer again it indexes those rows (`reindex`), so nothing waits for an operator.
        """
        health = self.index_health
        if health.down_since is None:
            health.down_since = time.monotonic()
            health.outages += 1
            log.warning("Chroma unavailable; recall uses Postgres until it returns: %s", exc)
        if self._probe is None or self._probe.done():
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop (a synchronous caller): the next async call probes
                return
            self._probe = loop.create_task(self._watch_index())

    async def _watch_index(self) -> None:
        delay = PROBE_FIRST_S
        while True:
            await asyncio.sleep(delay)
            if await self.index.connect():
                break
            delay = min(delay * 2, PROBE_MAX_S)
        health = self.index_health
        outage = time.monotonic() - (health.down_since or time.monotonic())
        health.down_since = None
        health.recoveries += 1
        try:
            done = await self.reindex()
        except Exception as exc:  # Postgres trouble: the next failure starts another probe
            log.warning("Chroma is back but catching up failed: %s", exc)
            return
        health.caught_up += done
        log.info("Chroma is back after %.0f s; indexed %d memories written meanwhile", outage, done)

    @staticmethod
    def embed_text(item: NewMemory | MemoryRecord) -> str:
        """The text a memory's vector is computed from (shared with the benchmark)."""
        return embed_text(
            item.content,
            speaker=item.provenance.get("speaker"),
            occurred_at=item.occurred_at,
            context=item.context,
        )

    @staticmethod
    def own_text(item: NewMemory | MemoryRecord) -> str | None:
        """The memory's own text if its `embed_text` carries context too, else None."""
        return own_text(item.content, speaker=item.provenance.get("speaker"), context=item.context)

    async def embed_memories(
        self, items: Sequence[NewMemory | MemoryRecord], vectors: Vectors | None = None
    ) -> tuple[Vectors, Vectors]:
        """Each memory's `embed_text` vector and its own-text vector, in one embedding call.

        A memory without context has one text: its own-text row is its vector. `vectors`
        given (the `embed_text` vectors, computed elsewhere) leaves only the own texts to embed.
        """
        if not items:
            empty = np.zeros((0, self.embedder.dim), dtype=np.float32)
            return empty, empty
        owns = [(i, t) for i, item in enumerate(items) if (t := self.own_text(item)) is not None]
        texts = [t for _, t in owns]
        if vectors is None:
            texts = [self.embed_text(i) for i in items] + texts
        computed = await self.embedder.aembed(texts) if texts else None
        if vectors is None:
            assert computed is not None
            vectors, computed = computed[: len(items)], computed[len(items) :]
        own = np.array(vectors, dtype=np.float32, copy=True)
        if owns:
            assert computed is not None
            own[[i for i, _ in owns]] = computed
        return vectors, own

    # -- writing -----------------------------------------------------------------------------

    async def write(self, scope: Scope, item: NewMemory, *, reason: str = "") -> MemoryRecord:
        """Store one memory (already gated and redacted) and index it."""
        return (await self.write_many(scope, [item], reason=reason))[0]

    async def write_many(
        self,
        scope: Scope,
        items: Sequence[NewMemory],
        *,
        reason: str = "",
        vectors: Vectors | None = None,
        own: Vectors | None = None,
    ) -> list[MemoryRecord]:
        """Store several memories of one user in one transaction, then index them.

        `vectors` (one unit row per item, of the embedder's dimension) skips embedding: for
        imports that carry their vectors and for benchmarks of synthetic corpora. `own` are
        their own-text vectors (`embed_memories`); without them a memory with context has its
        own text embedded here.
        """
        if not items:
            return []
        for item in items:
            _check_content(item)
        # Only the composer makes citations: a marker look-alike in any writer's text is
        # neutralised before it is stored (off the loop: a long text is folded character-wise).
        items = await asyncio.to_thread(lambda: [neutralised(i) for i in items])
        for given in (vectors, own):
            if given is not None and given.shape != (len(items), self.embedder.dim):
                raise MemoryInputError(
                    f"expected {len(items)} vectors of {self.embedder.dim} dimensions,"
                    f" got an array of shape {given.shape}"
                )
        if vectors is None or own is None:
            vectors, own = await self.embed_memories(items, vectors)
        records: list[MemoryRecord] = []
        async with self.pool.acquire() as conn, conn.transaction():
            for item, vector, own_vector in zip(items, vectors, own, strict=True):
                # Stored only where it differs: NULL means `embedding` is the own text's.
                params = insert_params(
                    new_id(),
                    scope.tenant_id,
                    scope.user_id,
                    item,
                    vector,
                    self.embedder.name,
                    own_vector if self.own_text(item) is not None else None,
                )
                row = await conn.fetchrow(INSERT_SQL, *params)
                records.append(record_from_row(row))
            await conn.executemany(
                "INSERT INTO memory_events (tenant_id, user_id, memory_id, event, reason, detail)"
                " VALUES ($1, $2, $3, 'write', $4, $5::jsonb)",
                [
                    (scope.tenant_id, scope.user_id, r.id, reason or "stored", _write_detail(r))
                    for r in records
                ],
            )
            version = await self.bump_version(conn, scope)
        self.cache.written(scope, records, vectors, version, own)
        if self.indexer is not None:
            self.indexer.submit(scope, records, vectors)
        else:
            await self.index_records(scope, records, vectors)
        return records

    async def index_records(
        self, scope: Scope, records: Sequence[MemoryRecord], vectors: Vectors
    ) -> bool:
        """Upsert stored records of one user into Chroma and mark them indexed.

        False if Chroma is down: rows Chroma missed stay `indexed_at IS NULL` for `reindex()`.
        """
        if any(r.scope != scope for r in records):
            raise MemoryInputError("every record must belong to the scope being indexed")
        return await self.index_batch(records, vectors)

    async def index_batch(
        self,
        records: Sequence[MemoryRecord],
        vectors: Vectors,
        *,
        unconfirmed: set[str] | None = None,
    ) -> bool:
        """Upsert stored records (of any users) into Chroma and mark them indexed.

        Only rows Chroma is then read back to hold are marked (`VectorIndex.held`); the ids of
        the others are added to `unconfirmed` and stay unindexed. One transaction holds the
        owners' forget locks shared (`storage.tombstones`) from locking the rows to their
        marking: a forget waits for an upsert in flight and then deletes its entries, and an
        upsert after a forget finds the rows gone and sends none of them. A row deleted while
        its upsert was in flight (the deletion found nothing to remove from Chroma yet) is not
        marked, it is gone: its entry is removed again here, so a forgotten memory never
        lingers in the index. False if Chroma is down (nothing is marked: the rows wait for
        `reindex()`).
        """
        if not records:
            return True
        try:
            async with self.pool.acquire() as conn, conn.transaction():
                await lock_users_shared(conn, (r.scope for r in records))
                rows = await conn.fetch(
                    f"SELECT id FROM memories WHERE id = ANY($1::text[]) {LOCK_IN_ID_ORDER}",
                    [r.id for r in records],
                )
                marked = {row["id"] for row in rows}
                keep = [i for i, r in enumerate(records) if r.id in marked]
                held: set[str] = set()
                if keep:
                    kept = [records[i] for i in keep]
                    await self.index.upsert(kept, vectors[keep])
                    held = await self.index.held(kept)  # an upsert that returned is not proof
                    # Marked indexed only where Chroma was seen to hold the entry; the others
                    # are left (or put back) unindexed.
                    await conn.execute(
                        "UPDATE memories SET indexed_at = CASE WHEN id = ANY($2::text[])"
                        " THEN now() END WHERE id = ANY($1::text[])",
                        [r.id for r in kept],
                        list(held),
                    )
        except VectorIndexError as exc:
            log.info("Chroma unavailable; %d memories kept for reindex: %s", len(records), exc)
            self.index_failed(exc)
            return False
        lost = [i for i in marked if i not in held]
        if lost:
            log.warning("Chroma did not keep %d of %d memories; left for reindex", len(lost),
                        len(records))  # fmt: skip
            if unconfirmed is not None:
                unconfirmed.update(lost)
        # A row deleted before this (the deletion may have found nothing in Chroma yet, or an
        # earlier upsert of it outlived the deletion): its entry is removed again.
        gone: dict[Scope, list[str]] = {}
        for record in records:
            if record.id not in marked:
                gone.setdefault(record.scope, []).append(record.id)
        for scope, ids in gone.items():
            try:
                await self.index.delete(scope, ids)
            except VectorIndexError as exc:  # owed like any deletion Chroma missed
                async with self.pool.acquire() as conn:
                    await enqueue(conn, "chroma_ids", ids, scope)
                self._deletions_owed = True
                self.index_failed(exc)
        await self.retry_deletions()  # Chroma answers again: pay the deletions it missed
        return True

    async def reindex(self, *, batch: int = 500, missing: set[str] | None = None) -> int:
        """Index every row not yet in Chroma (after an outage, or a rebuild). Admin operation.

        Deletions Chroma missed while it was down are retried first. Returns how many rows
        Chroma was read back to hold and were marked indexed; the ids it did not keep go into
        `missing` and stay unindexed (tried once per call, not in a loop).
        """
        await self.retry_deletions()
        done = 0
        lost: set[str] = set() if missing is None else missing
        while True:
            async with self.pool.acquire() as conn:
                rows = await conn.fetch(
                    f"SELECT {RECORD_COLUMNS}, embedding FROM memories WHERE indexed_at IS NULL"
                    " AND status <> 'deleted' AND id <> ALL($2::text[]) ORDER BY created_at"
                    " LIMIT $1",
                    batch,
                    list(lost),
                )
            if not rows:
                return done
            by_scope: dict[Scope, list[Row]] = {}
            for row in rows:
                by_scope.setdefault(Scope(row["tenant_id"], row["user_id"]), []).append(row)
            for scoped in by_scope.values():
                records, vectors = await self.vectors_for(scoped)
                before = len(lost)
                if not await self.index_batch(records, vectors, unconfirmed=lost):
                    return done
                done += len(records) - (len(lost) - before)

    async def backfill_own_vectors(self, *, batch: int = 256) -> int:
        """Embed the own text of kept rows written with context before it was stored. Admin.

        Such a row has `own_embedding` NULL, which recall reads as "its one vector is its own
        text's": it ranks by its context-bearing vector alone until this runs. Pages by id; a
        row changed meanwhile (another version) is left for the next run. Each user whose rows
        got a vector has their data version advanced, so caches load the new vectors. Returns
        how many rows got one.
        """
        after, done = "", 0
        while True:
            async with self.pool.acquire() as conn:
                rows = await conn.fetch(
                    f"SELECT {RECORD_COLUMNS} FROM memories WHERE id > $1 AND context <> ''"
                    " AND own_embedding IS NULL AND status <> 'deleted' ORDER BY id LIMIT $2",
                    after,
                    batch,
                )
            if not rows:
                return done
            records = [record_from_row(r) for r in rows]
            after = records[-1].id
            todo = [(r, t) for r in records if (t := self.own_text(r)) is not None]
            if not todo:
                continue
            vectors = await self.embedder.aembed([t for _, t in todo])
            async with self.pool.acquire() as conn, conn.transaction():
                updated = await conn.fetch(
                    "WITH v AS (SELECT * FROM unnest($1::text[], $2::int[], $3::bytea[])"
                    " AS v (id, version, own)),"
                    " target AS (SELECT m.id FROM memories m JOIN v ON m.id = v.id"
                    f" AND m.version = v.version AND m.own_embedding IS NULL {LOCK_IN_ID_ORDER})"
                    " UPDATE memories m SET own_embedding = v.own FROM v, target"
                    " WHERE m.id = target.id AND m.id = v.id"
                    " RETURNING m.tenant_id, m.user_id",
                    [r.id for r, _ in todo],
                    [r.version for r, _ in todo],
                    [vector_to_bytes(v) for v in vectors],
                )
                scopes = sorted({(u["tenant_id"], u["user_id"]) for u in updated})
                for tenant, user in scopes:
                    await self.bump_version(conn, Scope(tenant, user))
            for tenant, user in scopes:
                self.cache.invalidate(Scope(tenant, user))
            done += len(updated)

    async def rebuild_index(self) -> tuple[int, list[str]]:
        """Index every kept row again into the configured layout, then drop the old one. Admin.

        For a changed shard count: returns (memories indexed, collections dropped). The old
        collections are dropped only once every row is in the new ones, so recall never loses
        its dense leg for long, and nothing deleted lingers in a collection no one reads.
        """
        async with self.pool.acquire() as conn:
            await conn.execute("UPDATE memories SET indexed_at = NULL WHERE status <> 'deleted'")
        done = await self.reindex()
        async with self.pool.acquire() as conn:
            left = await conn.fetchval(
                "SELECT count(*) FROM memories WHERE indexed_at IS NULL AND status <> 'deleted'"
            )
        if left:
            raise VectorIndexError(f"{left} memories are not indexed yet; old layout kept")
        dropped = await self.index.drop_other_layouts()
        await self._record_layout()
        return done, dropped

    async def ensure_layout(self) -> tuple[int, list[str]]:
        """Move an old Chroma layout (another shard count) to the configured one, if any.

        The layout last migrated to is recorded per collection prefix in Postgres, so when it
        matches the settings this is one indexed lookup and Chroma is not asked. Otherwise the
        prefix's collections are listed; if another layout's exist every kept row is indexed
        again into the new ones and the old ones are dropped (they would otherwise keep what
        is deleted later). Returns (memories indexed again, collections dropped).
        """
        prefix, shards = self.index.settings.chroma_prefix, self.index.settings.chroma_shards
        async with self.pool.acquire() as conn:
            recorded = await conn.fetchrow(
                "SELECT shards, owner_tags FROM index_layouts WHERE prefix = $1", prefix
            )
        if recorded is not None and recorded["shards"] == shards and recorded["owner_tags"]:
            self.index.legacy_owners = False
            return 0, []
        moved, dropped = 0, list[str]()
        if (recorded is None or recorded["shards"] != shards) and await self.index.other_layouts():
            moved, dropped = await self.rebuild_index()
            log.warning(
                "Chroma layout changed: indexed %d memories again, dropped %s",
                moved,
                ", ".join(dropped),
            )
        # Entries an older version wrote with ids and text (the image layer is never rebuilt).
        if rewritten := await self.index.retag_legacy():
            log.warning("Chroma: %d entries rewritten without their owner's ids or text", rewritten)
        await self._record_layout(owner_tags=True)
        self.index.legacy_owners = False
        return moved, dropped

    async def _record_layout(self, *, owner_tags: bool = False) -> None:
        # `owner_tags` is only ever set, never cleared: a rebuild writes hashed owners anyway.
        settings = self.index.settings
        async with self.pool.acquire() as conn:
            await conn.execute(
                "INSERT INTO index_layouts (prefix, shards, owner_tags) VALUES ($1, $2, $3)"
                " ON CONFLICT (prefix) DO UPDATE SET shards = $2, checked_at = now(),"
                " owner_tags = index_layouts.owner_tags OR $3",
                settings.chroma_prefix,
                settings.chroma_shards,
                owner_tags,
            )

    # -- reading -----------------------------------------------------------------------------

    async def resolve_id(self, scope: Scope, given: str) -> str:
        """The id of this user's memory that `given` names: the id itself or a unique prefix.

        The product shows ids shortened (`a1b2c3d4`, dashes left out); every command that takes
        an id takes those too. Only this user's memories are searched. A prefix that begins
        several ids raises AmbiguousIdError naming them; one that begins none comes back as
        given, so the caller reports "no such memory" as for any unknown id.
        """
        given = given.strip()
        key = given.replace("-", "").lower()
        async with self.pool.acquire() as conn:
            if await conn.fetchval(
                "SELECT 1 FROM memories WHERE tenant_id = $1 AND user_id = $2 AND id = $3",
                scope.tenant_id, scope.user_id, given,
            ):  # fmt: skip
                return given
            if len(key) < MIN_ID_PREFIX or not set(key) <= _HEX:
                return given  # hex digits only, so nothing in it can act as a LIKE wildcard
            rows = await conn.fetch(
                "SELECT id FROM memories WHERE tenant_id = $1 AND user_id = $2"
                " AND replace(id, '-', '') LIKE $3 ORDER BY id LIMIT 6",
                scope.tenant_id, scope.user_id, key + "%",
            )  # fmt: skip
        ids = [str(r["id"]) for r in rows]
        if len(ids) > 1:
            shown = ", ".join(ids[:5]) + (" ..." if len(ids) > 5 else "")
            raise AmbiguousIdError(f"{given!r} begins more than one memory id ({shown}); give more")
        return ids[0] if ids else given

    async def get(self, scope: Scope, memory_id: str) -> MemoryRecord | None:
        """One memory of this user, whatever its status."""
        async with self.pool.acquire() as conn:
            row = await conn.fetchrow(
                f"SELECT {RECORD_COLUMNS} FROM memories"
                " WHERE tenant_id = $1 AND user_id = $2 AND id = $3",
                scope.tenant_id,
                scope.user_id,
                memory_id,
            )
        return record_from_row(row) if row else None

    async def list_memories(
        self,
        scope: Scope,
        *,
        kinds: Collection[MemoryKind] | None = None,
        statuses: Collection[str] = ("active",),
        limit: int = 100,
        offset: int = 0,
    ) -> list[MemoryRecord]:
        """List this user's memories, newest first."""
        kind_values = [k.value for k in kinds] if kinds else [k.value for k in MemoryKind]
        async with self.pool.acquire() as conn:
            rows = await conn.fetch(
                f"SELECT {RECORD_COLUMNS} FROM memories WHERE tenant_id = $1 AND user_id = $2"
                " AND kind = ANY($3::text[]) AND status = ANY($4::text[])"
                " ORDER BY occurred_at DESC, id LIMIT $5 OFFSET $6",
                scope.tenant_id,
                scope.user_id,
                kind_values,
                list(statuses),
                limit,
                offset,
            )
        return [record_from_row(r) for r in rows]

    async def scope_version(self, scope: Scope) -> int:
        """The user's data version: it changes with every change of their memories (0: none)."""
        async with self.pool.acquire() as conn:
            version = await conn.fetchval(
                "SELECT version FROM scope_versions WHERE tenant_id = $1 AND user_id = $2",
                scope.tenant_id,
                scope.user_id,
            )
        return int(version or 0)

    async def active_memories(
        self, scope: Scope, *, limit: int | None = None
    ) -> tuple[list[MemoryRecord], Vectors]:
        """The user's active, unexpired memories and their vectors (what recall searches).

        `limit` caps how many rows are read (any ones: callers use it to learn whether a user
        has more than `limit - 1`).
        """
        async with self.pool.acquire() as conn:
            rows = await conn.fetch(
                f"SELECT {RECORD_COLUMNS}, embedding, own_embedding FROM memories WHERE {_MINE}"
                " LIMIT $3",
                scope.tenant_id,
                scope.user_id,
                limit,
            )
        return await self.vectors_for(rows)

    async def count_active(self, scope: Scope) -> int:
        """How many active, unexpired memories the user has (to size a cache before loading)."""
        async with self.pool.acquire() as conn:
            n = await conn.fetchval(
                "SELECT count(*) FROM memories WHERE tenant_id = $1 AND user_id = $2"
                " AND status = 'active' AND (expires_at IS NULL OR expires_at > now())",
                scope.tenant_id,
                scope.user_id,
            )
        return int(n or 0)

    async def count_active_by_layer(self, scope: Scope) -> dict[str, int]:
        """How many active, unexpired memories the user has in each Chroma layer."""
        async with self.pool.acquire() as conn:
            rows = await conn.fetch(
                f"SELECT kind, count(*) AS n FROM memories WHERE {_MINE} GROUP BY kind",
                scope.tenant_id,
                scope.user_id,
            )
        counts: dict[str, int] = {}
        for row in rows:
            layer = MemoryKind(row["kind"]).layer
            counts[layer] = counts.get(layer, 0) + int(row["n"])
        return counts

    async def candidates(
        self,
        scope: Scope,
        *,
        terms: Sequence[str] = (),
        phrases: Sequence[str] = (),
        limit: int = 200,
        recent: int = 0,
        whole: bool = True,
        sampled: bool = False,
        lexical_limit: int | None = None,
        common: Collection[str] = (),
    ) -> Candidates:
        """Active memories of one user that may answer a query, in one round trip.

        With `whole`, a user with no more than `limit` active memories gets all of them
        (`complete`: ranking them all is exactly L1's ranking). Otherwise the union of: up to
        `limit` lexical matches (`terms` are words, or stems ending in `*` for a prefix match,
        looked up in the `memories_own_tsv` index (keyed by owner) and ranked on `tsv`;
        `phrases` are CJK characters or bigrams, looked up in the `cjk_grams` index, since
        `tsv` does not split text without spaces); up to `limit` rows Chroma has not indexed
        yet (so a lagging index hides nothing); and, with `recent`, the user's most recent and
        most important rows (when Chroma is down and there is no dense leg). `lexical_limit`
        (default `limit`) bounds the lexical matches alone (words and CJK grams). The dense leg's
        rows come from `nearest_rows`. Each row comes with its stored vector and its stored
        recall features (see `memory.recall.features`).

        `sampled` bounds the lexical lookups' cost for a user with very many rows. A word with
        more matches than the leg reads of one word (`_per_term`) is then read as a random
        sample of them (Postgres's `gin_fuzzy_search_limit`) instead of all of them; a rarer word
        is still found whole. Without it, a common word's lookup reads all its
        matches to keep the first few: ~4 ms a word for a user with 200,000 memories. It applies
        to exact words (`a|b|c`, each looked up on its own) and to the CJK grams' lookup when all
        its grams are common; a prefix term (`stem*`) still reads all its matches first.
        A sampled lookup also tells which of its words the user has at least
        `saturation_matches(lexical_limit)` matches of (`saturated`); passed back as `common`,
        such words are not looked up again (the rows still rank by them). A common word's rows
        are only kept where another word's lookup also found them, and two samples rarely
        meet. For the 200,000-memory user (`bench.big_user --corpus random`, 29 queries), the
        top 8 without those lookups kept 221-222 of 232 places of a sampled ranking's, where a
        second sampled ranking kept 223-226, and Postgres spent 11.4 ms of CPU a recall against
        16.8.
        """
        ranked = _tsquery_terms(terms)
        query = " | ".join(ranked)
        skip = {_lexeme(t) for t in common}
        lexemes = [x for x in ranked if x not in skip]
        matches = limit if lexical_limit is None else lexical_limit
        owner = cjk_owner(scope)
        grams = list(dict.fromkeys(owner + p for p in phrases if 0 < len(p) <= 2))
        async with self.pool.acquire() as conn, conn.transaction():
            # Planned for this user, not once for all: a generic plan assumes an average user,
            # and for a user with 200,000 rows it intersects every term's index matches with
            # all their rows (milliseconds each) instead of reading the few matches needed.
            settings = "SET LOCAL plan_cache_mode = force_custom_plan"
            if sampled:
                # Twice what one term may contribute: a sampled word still fills its share,
                # so the rows it adds are known to be a sample (see `lexical` below).
                bound = 2 * LEXICAL_PER_TERM * matches
                settings += f"; SET LOCAL gin_fuzzy_search_limit = {int(bound)}"
            await conn.execute(settings)
            rows = await conn.fetch(
                f"""
                WITH small AS (
                    SELECT $7::boolean AND count(*) <= $5 AS yes
                    FROM (SELECT 1 FROM memories WHERE {_MINE} LIMIT $5 + 1) mine
                ), matches AS MATERIALIZED (
                    -- Reading and ranking every match of a common word costs microseconds a
                    -- row: for a user with 200,000 memories, tens of ms or more. Each query term
                    -- contributes at most $8 of its matches (`_per_term`), and only those are
                    -- ranked: a rare word (a name, a number: what the lexical leg is for) has
                    -- fewer matches than that and is always found whole, however common the
                    -- query's other words are. One scan over all terms at once would fill the
                    -- budget with the common words' rows, in table order, before reaching it.
                    -- The rows are ranked rare words first, as BM25 weighs them: each term a
                    -- row matches adds ln(1 + $8 / the term's matches), so a name matched by one
                    -- row outranks a common word's hundreds (`ts_rank` alone knows no rarity
                    -- and let them crowd the name out); then `ts_rank` and recency. A row that
                    -- matches only one word, a word with as many matches as are read of it, is
                    -- left out: it is an arbitrary one of them (first in table order, or sampled).
                    SELECT id, term, count(*) OVER (PARTITION BY term) AS n, r, occurred_at
                    FROM (
                        SELECT DISTINCT ON (t.term, m.id) t.term, m.id, m.occurred_at,
                               ts_rank(m.tsv, to_tsquery('simple', $3)) AS r
                        FROM unnest($9::text[]) AS t (term) CROSS JOIN LATERAL (
                            SELECT f.id, f.tsv, f.occurred_at
                            FROM unnest(string_to_array(t.term, '|')) AS w (word)
                            CROSS JOIN LATERAL (
                                -- Looked up by owner: the user's matches, not everyone's.
                                -- One lookup per form of a word (`a|b|c`): Postgres samples
                                -- a lookup only when all its words are common (`sampled`).
                                SELECT id, tsv, occurred_at FROM memories
                                WHERE {_MINE_BY_ROW} AND {OWN_TSV} @@ {_OWN_TERM}
                                AND NOT (SELECT yes FROM small)
                                LIMIT $8
                            ) f
                            LIMIT $8
                        ) m
                    ) hits
                ), lexical AS (
                    SELECT id FROM matches
                    GROUP BY id HAVING count(*) > 1 OR min(n) < $8
                    ORDER BY sum(ln(1.0 + $8::float8 / n)) DESC, max(r) DESC, max(occurred_at) DESC
                    LIMIT $11
                ), grams AS (
                    SELECT id FROM memories WHERE {_MINE_BY_ROW} AND cardinality($4::text[]) > 0
                    AND cjk_grams && $4::text[]
                    AND NOT (SELECT yes FROM small)
                    ORDER BY (SELECT count(*) FROM unnest(cjk_grams) g WHERE g = ANY($4::text[]))
                             DESC, occurred_at DESC
                    LIMIT $11
                ), lagging AS (
                    SELECT id FROM memories WHERE {_MINE} AND indexed_at IS NULL
                    AND NOT (SELECT yes FROM small) ORDER BY created_at DESC LIMIT $5
                ), recent AS (
                    SELECT id FROM memories WHERE {_MINE} AND NOT (SELECT yes FROM small)
                    ORDER BY occurred_at DESC LIMIT $6
                ), important AS (
                    SELECT id FROM memories WHERE {_MINE} AND NOT (SELECT yes FROM small)
                    ORDER BY pinned DESC, importance DESC LIMIT $6
                )
                -- One row even when no memory qualifies: `complete` is always answered.
                -- Two branches, not one OR: each is then planned on its own index (the user's
                -- rows, or the candidates' ids), never as a scan of the user's rows.
                SELECT small.yes AS complete,
                       ARRAY(SELECT DISTINCT term FROM matches WHERE n >= $12) AS saturated,
                       found.* FROM small LEFT JOIN (
                    SELECT {RECORD_COLUMNS}, embedding, own_embedding, recall_features
                    FROM memories WHERE {_MINE} AND (SELECT yes FROM small)
                    UNION ALL
                    SELECT {RECORD_COLUMNS}, embedding, own_embedding, recall_features
                    FROM memories WHERE {_MINE} AND NOT (SELECT yes FROM small) AND id IN (
                        SELECT id FROM lexical
                        UNION SELECT id FROM grams UNION SELECT id FROM lagging
                        UNION SELECT id FROM recent UNION SELECT id FROM important
                    )
                ) found ON true
                """,
                scope.tenant_id,
                scope.user_id,
                query,
                grams[: 2 * MAX_LEXICAL_TERMS],
                limit,
                recent,
                whole,
                _per_term(matches, len(lexemes)),
                lexemes,
                owner,
                matches,
                saturation_matches(matches),
            )
        complete = bool(rows[0]["complete"])
        saturated = _terms_of(terms, set(rows[0]["saturated"] or ()))
        rows = [r for r in rows if r["id"] is not None]
        records, vectors, own = await self.vectors_with_own(rows)
        features = [r["recall_features"] for r in rows]
        return Candidates(records, vectors, features, complete, own, saturated)

    async def nearest_rows(
        self,
        scope: Scope,
        *,
        ids: Sequence[str] = (),
        nearest: Sequence[Sequence[str]] = (),
        limit: int = 200,
    ) -> Candidates:
        """The dense leg's rows: the user's active rows among Chroma's hits, in one statement.

        `ids` are hits known to be the user's (a search with the owner filter). `nearest` are
        lists of ids, nearest first, from layers searched without the filter, which may name
        other users' entries: from each list, the first `limit` that are this user's active
        rows are taken. These rows are on the critical path of a large user's recall (they come
        after Chroma answers); the lexical leg, run beside it, brings the rows Chroma has not
        indexed yet.

        The statement is `NEAREST_ROWS_SQL`, where the ids drive the read by primary key.
        """
        if not ids and not nearest:
            return Candidates([], np.zeros((0, self.embedder.dim), dtype=np.float32), [], False)
        async with self.pool.acquire() as conn:
            rows = await conn.fetch(
                NEAREST_ROWS_SQL,
                scope.tenant_id,
                scope.user_id,
                list(ids),
                [mid for ids in nearest for mid in ids],
                [i for i, ids in enumerate(nearest) for _ in ids],
                limit,
            )
        rows = list({row["id"]: row for row in rows}.values())
        records, vectors, own = await self.vectors_with_own(rows)
        return Candidates(records, vectors, [r["recall_features"] for r in rows], False, own)

    async def active_with_features(self, scope: Scope) -> Candidates:
        """All the user's active, unexpired memories with vectors and stored recall features."""
        async with self.pool.acquire() as conn:
            rows = await conn.fetch(
                f"SELECT {RECORD_COLUMNS}, embedding, own_embedding, recall_features FROM memories"
                f" WHERE {_MINE}",
                scope.tenant_id,
                scope.user_id,
            )
        records, vectors, own = await self.vectors_with_own(rows)
        return Candidates(records, vectors, [r["recall_features"] for r in rows], True, own)

    async def save_recall_features(self, scope: Scope, features: Sequence[tuple[str, str]]) -> None:
        """Store (memory id, features JSON) pairs computed by recall; no version change.

        Features are derived from the row, not part of it: other processes' caches stay valid.
        """
        if not features:
            return
        async with self.pool.acquire() as conn:
            await conn.execute(
                "WITH f AS (SELECT * FROM unnest($3::text[], $4::text[]) AS f (id, v)),"
                " target AS (SELECT id FROM memories WHERE tenant_id = $1 AND user_id = $2"
                f" AND id IN (SELECT id FROM f) {LOCK_IN_ID_ORDER})"
                " UPDATE memories m SET recall_features = f.v::jsonb FROM f, target"
                " WHERE m.id = target.id AND m.id = f.id",
                scope.tenant_id,
                scope.user_id,
                [mid for mid, _ in features],
                [value for _, value in features],
            )

    async def rows_with_feature_keys(
        self, *, after: str = "", limit: int = 1000
    ) -> list[tuple[Scope, MemoryRecord, str | None]]:
        """Kept rows by id after `after`, each with its stored features' key (None: none).

        For a backfill that also finds features computed from older text or by an older
        tokeniser: which those are only the key, computed from the row, can tell.
        """
        async with self.pool.acquire() as conn:
            rows = await conn.fetch(
                f"SELECT {RECORD_COLUMNS}, recall_features->>'k' AS features_key FROM memories"
                " WHERE id > $1 AND status <> 'deleted' ORDER BY id LIMIT $2",
                after,
                limit,
            )
        return [
            (Scope(r["tenant_id"], r["user_id"]), record_from_row(r), r["features_key"])
            for r in rows
        ]

    async def sample_vectors(self, scope: Scope, n: int) -> tuple[Vectors, Vectors | None]:
        """Stored vectors of up to `n` of the user's active memories, a uniform sample.

        Ids are random (uuid4 hex), so the first `n` by id are a random choice of the rows.
        Returns the vectors and, row for row, the own-text vectors (the vector where a memory
        has none; None when none has).
        """
        async with self.pool.acquire() as conn:
            rows = await conn.fetch(
                f"SELECT embedding, own_embedding FROM memories WHERE {_MINE}"
                " AND embedding IS NOT NULL ORDER BY id LIMIT $3",
                scope.tenant_id,
                scope.user_id,
                n,
            )
        dim = self.embedder.dim
        pairs = [
            (v, vector_from_bytes(r["own_embedding"], dim))
            for r in rows
            if (v := vector_from_bytes(r["embedding"], dim)) is not None
        ]
        if not pairs:
            return np.zeros((0, dim), dtype=np.float32), None
        vectors = np.vstack([v for v, _ in pairs])
        if all(o is None for _, o in pairs):
            return vectors, None
        return vectors, np.vstack([v if o is None else o for v, o in pairs])

    async def strongest_long_term(self, scope: Scope, limit: int) -> list[MemoryRecord]:
        """The user's strongest long-term memories: pinned, then confident, important, recent."""
        async with self.pool.acquire() as conn:
            rows = await conn.fetch(
                f"SELECT {RECORD_COLUMNS} FROM memories WHERE tenant_id = $1 AND user_id = $2"
                " AND status = 'active' AND kind <> 'episodic'"
                " AND (expires_at IS NULL OR expires_at > now())"
                " ORDER BY pinned DESC, confidence DESC, importance DESC, occurred_at DESC"
                " LIMIT $3",
                scope.tenant_id,
                scope.user_id,
                limit,
            )
        return [record_from_row(r) for r in rows]

    async def vectors_for(self, rows: Sequence[Row]) -> tuple[list[MemoryRecord], Vectors]:
        """Records and their stored vectors; re-embeds rows whose vector is missing or stale.

        `rows` are `memories` rows selected with `RECORD_COLUMNS` and `embedding`.
        """
        records, vectors, _ = await self.vectors_with_own(rows)
        return records, vectors

    async def vectors_with_own(
        self, rows: Sequence[Row]
    ) -> tuple[list[MemoryRecord], Vectors, Vectors | None]:
        """Records, their stored vectors and their own-text vectors (see `embed_memories`).

        `rows` are selected with `RECORD_COLUMNS`, `embedding` and, if selected,
        `own_embedding` (NULL: the memory's vector is its own text's). A row whose vector is
        missing or of another model's dimension has both embedded again. The own-text vectors
        are None when no row has one of its own (no copy of the vectors is made).
        """
        dim = self.embedder.dim
        records = [record_from_row(r) for r in rows]
        if not records:
            return [], np.zeros((0, dim), dtype=np.float32), None
        vectors: list[np.ndarray | None] = [vector_from_bytes(r["embedding"], dim) for r in rows]
        owns = [vector_from_bytes(r.get("own_embedding"), dim) for r in rows]
        missing = [i for i, v in enumerate(vectors) if v is None]
        if missing:
            fresh, fresh_own = await self.embed_memories([records[i] for i in missing])
            for j, i in enumerate(missing):
                vectors[i], owns[i] = fresh[j], fresh_own[j]
        matrix = np.vstack([v for v in vectors if v is not None])
        if all(v is None for v in owns):
            return records, matrix, None
        own = matrix.copy()
        for i, vector in enumerate(owns):
            if vector is not None:
                own[i] = vector
        return records, matrix, own

    async def owners(self, *, tenant: str | None = None, user: str | None = None) -> list[Scope]:
        """The users with stored memories, sorted; `tenant` / `user` narrow to a match. Admin."""
        async with self.pool.acquire() as conn:
            rows = await conn.fetch(
                "SELECT DISTINCT tenant_id, user_id FROM memories WHERE status <> 'deleted'"
                " AND ($1::text IS NULL OR tenant_id = $1) AND ($2::text IS NULL OR user_id = $2)"
                " ORDER BY tenant_id, user_id",
                tenant,
                user,
            )
        return [Scope(r["tenant_id"], r["user_id"]) for r in rows]

    async def daily_counts(self, tenant: str) -> list[tuple[str, str, int]]:
        """(day "YYYY-MM-DD", kind, memories created) of a tenant's kept memories, by day. Admin."""
        async with self.pool.acquire() as conn:
            rows = await conn.fetch(
                "SELECT to_char(date_trunc('day', created_at), 'YYYY-MM-DD') AS day, kind,"
                " count(*) AS n FROM memories WHERE tenant_id = $1 AND status <> 'deleted'"
                " GROUP BY 1, 2 ORDER BY 1",
                tenant,
            )
        return [(r["day"], r["kind"], int(r["n"])) for r in rows]

    async def events(self, scope: Scope, memory_id: str | None = None) -> list[dict[str, Any]]:
        """The audit trail of this user (or of one of their memories), oldest first."""
        async with self.pool.acquire() as conn:
            rows = await conn.fetch(
                "SELECT id, memory_id, event, reason, detail, actor, at FROM memory_events"
                " WHERE tenant_id = $1 AND user_id = $2 AND ($3::text IS NULL OR memory_id = $3)"
                " ORDER BY id",
                scope.tenant_id,
                scope.user_id,
                memory_id,
            )
        return [
            {
                **dict(r),
                "detail": json.loads(r["detail"]) if isinstance(r["detail"], str) else r["detail"],
            }
            for r in rows
        ]

    async def consent(self, scope: Scope) -> bool:
        """Whether the user consents to memories being kept (default yes until they opt out)."""
        async with self.pool.acquire() as conn:
            value = await conn.fetchval(
                "SELECT consent FROM user_settings WHERE tenant_id = $1 AND user_id = $2",
                scope.tenant_id,
                scope.user_id,
            )
        return True if value is None else bool(value)

    # -- changing ----------------------------------------------------------------------------

    async def set_status(
        self,
        scope: Scope,
        memory_id: str,
        status: Status,
        *,
        reason: str,
        superseded_by: str | None = None,
        event: str | None = None,
    ) -> MemoryRecord | None:
        """Change a memory's status (supersede, expire, approve ...) with an audit event."""
        async with self.pool.acquire() as conn, conn.transaction():
            # The forget lock before the row lock: the row's guard trigger takes it after
            # locking the row, while a forget holding it waits for that row (a deadlock).
            await lock_users_shared(conn, [scope])
            if superseded_by is not None:
                # The foreign key locks the successor's row after this one's; a batch that
                # locks both in the global order (the indexer) would deadlock with that. Both
                # rows are locked in that order first.
                await conn.execute(
                    f"SELECT id FROM memories WHERE tenant_id = $1 AND user_id = $2"
                    f" AND id = ANY($3::text[]) {LOCK_IN_ID_ORDER}",
                    scope.tenant_id,
                    scope.user_id,
                    [memory_id, superseded_by],
                )
            row = await conn.fetchrow(
                "UPDATE memories SET status = $4, superseded_by = COALESCE($5, superseded_by),"
                " updated_at = now(), version = version + 1"
                " WHERE tenant_id = $1 AND user_id = $2 AND id = $3 RETURNING " + RECORD_COLUMNS,
                scope.tenant_id,
                scope.user_id,
                memory_id,
                status.value,
                superseded_by,
            )
            if row is None:
                return None
            await self.add_event(
                conn,
                scope,
                memory_id,
                event or status.value,
                reason,
                {"superseded_by": superseded_by} if superseded_by else {},
            )
            await self.bump_version(conn, scope)
        self.cache.invalidate(scope)
        return record_from_row(row)

    async def reinforce(
        self, scope: Scope, memory_id: str, *, confidence_step: float = 0.05, reason: str
    ) -> MemoryRecord | None:
        """A near-duplicate was seen again: raise confidence and access stats, no new copy."""
        async with self.pool.acquire() as conn, conn.transaction():
            await lock_users_shared(conn, [scope])  # before the row lock, as in `set_status`
            row = await conn.fetchrow(
                "UPDATE memories SET confidence = LEAST(1.0, confidence + $4),"
                " access_count = access_count + 1, last_accessed = now(), updated_at = now()"
                " WHERE tenant_id = $1 AND user_id = $2 AND id = $3 AND status = 'active'"
                " RETURNING " + RECORD_COLUMNS,
                scope.tenant_id,
                scope.user_id,
                memory_id,
                confidence_step,
            )
            if row is None:
                return None
            await self.add_event(conn, scope, memory_id, "update", reason, {})
        return record_from_row(row)

    async def delete(self, scope: Scope, memory_id: str, *, reason: str) -> dict[str, int]:
        """Delete one memory from Postgres and Chroma; return a receipt of what was removed.

        The Chroma deletion is recorded in the outbox in the same transaction as the row's, so
        it is owed even if this process dies before Chroma answers; with Chroma down the receipt
        says `chroma_pending: 1` and the deletion is retried later (see `deletion_outbox`).
        """
        await self.retry_deletions()  # older deletions first, if Chroma is back
        async with self.pool.acquire() as conn, conn.transaction():
            deleted = await conn.execute(
                "DELETE FROM memories WHERE tenant_id = $1 AND user_id = $2 AND id = $3",
                scope.tenant_id,
                scope.user_id,
                memory_id,
            )
            versions = await conn.execute(
                "DELETE FROM memory_versions WHERE tenant_id = $1 AND user_id = $2"
                " AND memory_id = $3",
                scope.tenant_id,
                scope.user_id,
                memory_id,
            )
            # The audit trail keeps that a deletion happened, never what was deleted.
            events = await conn.execute(
                "UPDATE memory_events SET detail = '{}'::jsonb, reason = 'redacted: deleted'"
                " WHERE tenant_id = $1 AND user_id = $2 AND memory_id = $3",
                scope.tenant_id,
                scope.user_id,
                memory_id,
            )
            n = int(deleted.split()[-1])
            if n:
                await self.add_event(conn, scope, memory_id, "delete", reason, {})
                await self.bump_version(conn, scope)
                await enqueue(conn, "chroma_ids", [memory_id], scope)
        self.cache.invalidate(scope)
        chroma = pending = 0
        if n:
            self._deletions_owed = True
            await retry_chroma(self.pool, self.index, self.index.settings, scope=scope,
                               compaction=self.compaction)  # fmt: skip
            pending = int(await owed(self.pool, "chroma_ids", memory_id, scope))
            chroma = 1 - pending
            if pending:
                log.warning("Chroma unavailable while deleting %s: queued for retry", memory_id)
                self.index_failed(VectorIndexError("deletion not confirmed"))
        return {
            "memories": n,
            "versions": int(versions.split()[-1]),
            "audit_events_redacted": int(events.split()[-1]),
            "chroma_entries": chroma,
            "chroma_pending": pending,
        }

    async def retry_deletions(self) -> int:
        """Retry the Chroma deletions still owed; how many completed (0 while Chroma is down)."""
        if not self._deletions_owed:
            return 0
        done = await retry_chroma(
            self.pool, self.index, self.index.settings, compaction=self.compaction
        )
        self._deletions_owed = await has_chroma_work(self.pool)
        return done

    async def touch_thread(self, scope: Scope, thread_id: str) -> None:
        """Remember that `thread_id` belongs to this user (for deletion of their checkpoints).

        Written once per thread and process while the user exists (`memory.storage.threads`).
        """
        await self.threads.touch(scope, thread_id)

    async def set_consent(self, scope: Scope, consent: bool) -> None:
        """Record whether the user consents to long-term memory."""
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute(
                "INSERT INTO user_settings (tenant_id, user_id, consent) VALUES ($1, $2, $3)"
                " ON CONFLICT (tenant_id, user_id) DO UPDATE SET consent = $3, updated_at = now()",
                scope.tenant_id,
                scope.user_id,
                consent,
            )
            await self.add_event(
                conn, scope, None, "consent", "granted" if consent else "revoked", {}
            )

    async def record_access(self, scope: Scope, ids: Sequence[str], query: str) -> None:
        """Count a recall's use of `ids` (access statistics) with an audit event.

        Queued and written in batches (`memory.storage.access_log`): returns at once, the
        counts land within a quarter of a second, and `drain()` waits for them.
        """
        self.access_log.add(scope, list(dict.fromkeys(ids)), len(query))

    async def record_event(
        self,
        scope: Scope,
        memory_id: str | None,
        event: str,
        reason: str,
        detail: dict[str, Any] | None = None,
    ) -> None:
        """Append an audit event (gate decisions, conflicts, approvals ...)."""
        async with self.pool.acquire() as conn:
            await self.add_event(conn, scope, memory_id, event, reason, detail or {})

    async def record_events(self, scope: Scope, events: Sequence[AuditEvent]) -> None:
        """Append several audit events of one user in one round trip (a turn's gate drops)."""
        if not events:
            return
        async with self.pool.acquire() as conn:
            await conn.executemany(
                "INSERT INTO memory_events (tenant_id, user_id, memory_id, event, reason, detail)"
                " VALUES ($1, $2, $3, $4, $5, $6::jsonb)",
                [
                    (scope.tenant_id, scope.user_id, e.memory_id, e.event, e.reason,
                     json.dumps(e.detail, ensure_ascii=False, default=str))
                    for e in events
                ],
            )  # fmt: skip

    async def bump_version(self, conn: Connection, scope: Scope) -> int:
        """Advance the user's data version inside the caller's transaction; the new version.

        Its commit notifies other processes (a trigger on `scope_versions`), whose caches reload.
        """
        version = await conn.fetchval(
            # A user's first row starts at epoch·2^32, so a user deleted and re-created never
            # reuses a version a cache may still hold; updates count up by one.
            "INSERT INTO scope_versions (tenant_id, user_id, version)"
            " VALUES ($1, $2, nextval('scope_epoch_seq') * 4294967296)"
            " ON CONFLICT (tenant_id, user_id) DO UPDATE"
            " SET version = scope_versions.version + 1 RETURNING version",
            scope.tenant_id,
            scope.user_id,
        )
        return int(version)

    async def add_event(
        self,
        conn: Connection,
        scope: Scope,
        memory_id: str | None,
        event: str,
        reason: str,
        detail: dict[str, Any],
    ) -> None:
        """Append an audit event inside the caller's transaction (with the change it records)."""
        await conn.execute(
            "INSERT INTO memory_events (tenant_id, user_id, memory_id, event, reason, detail)"
            " VALUES ($1, $2, $3, $4, $5, $6::jsonb)",
            scope.tenant_id,
            scope.user_id,
            memory_id,
            event,
            reason,
            json.dumps(detail, ensure_ascii=False, default=str),
        )


def saturation_matches(lexical_limit: int) -> int:
    """The most matches one word's lookup reads (`_per_term`) for a leg of `lexical_limit`."""
    return LEXICAL_PER_TERM * lexical_limit


def _per_term(limit: int, terms: int) -> int:
    """How many matches of each lexical query term are ranked for `limit` candidates."""
    return max(1, min(LEXICAL_PER_TERM * limit, LEXICAL_RANKED * limit // max(1, terms)))


def _tsquery_terms(terms: Sequence[str]) -> list[str]:
    """Query terms safe to join into a tsquery: words, stems for a prefix match, word forms.

    A term is a word, a stem marked for a prefix match (`stem*`), or alternative exact words
    (`a|b|c`, any of them); words that are not letters and digits are left out.
    """
    out: list[str] = []
    for term in terms:
        if "|" in term:
            forms = [f for f in dict.fromkeys(term.split("|")) if _TSQUERY_TERM.match(f)]
            word = "|".join(forms[:MAX_WORD_FORMS])
            if word and word not in out:
                out.append(word)
        else:
            word, prefix = (term[:-1], True) if term.endswith("*") else (term, False)
            if _TSQUERY_TERM.match(word) and word not in out:
                out.append(f"{word}:*" if prefix else word)
        if len(out) >= MAX_LEXICAL_TERMS:
            break
    return out


def _lexeme(term: str) -> str | None:
    """`term` as `_tsquery_terms` sends it to Postgres; None when it is left out."""
    found = _tsquery_terms([term])
    return found[0] if found else None


def _terms_of(terms: Sequence[str], lexemes: set[str]) -> frozenset[str]:
    """The `terms` that were sent to Postgres as `lexemes`.

    `terms` are read only until every lexeme is found: a pasted page's thousands of words are
    not each matched against the term pattern.
    """
    left, found = set(lexemes), set()
    for term in terms:
        if not left:
            break
        lexeme = _lexeme(term)
        if lexeme in left:
            left.discard(lexeme)
            found.add(term)
    return frozenset(found)


def _write_detail(record: MemoryRecord) -> str:
    return json.dumps(
        {
            "kind": record.kind.value,
            "category": record.category.value,
            "importance": record.importance,
            "origin": record.origin.value,
        },
    )


@asynccontextmanager
async def open_store(
    settings: Settings | None = None,
    *,
    reindex_on_start: bool = True,
    migrate_layout: bool = True,
) -> AsyncIterator[MemoryStore]:
    """Open the stores (embedded defaults unless URLs are set) and close them cleanly.

    Every opening moves an old Chroma layout to the configured one (`ensure_layout`: one
    Postgres lookup when nothing changed); `reindex_on_start` also indexes rows Chroma missed.
    """
    settings = settings or Settings.from_env()
    await claim(settings)  # a second process on an embedded Chroma fails here, clearly
    # Side by side: starting the embedded PostgreSQL waits on a subprocess while loading the
    # ONNX model is CPU work; together they are most of a CLI command's ~1 s start-up.
    url, embedder = await asyncio.gather(
        asyncio.to_thread(database_url, settings),
        asyncio.to_thread(
            get_embedder,
            settings.embedding_model,
            settings.embedding_model_dir,
            download_url=settings.embedding_model_url,
            sha256=settings.embedding_model_sha256,
        ),
    )
    async with open_pool(url) as pool:
        store = MemoryStore(
            pool,
            VectorIndex(settings, owner_key=await owner_key(pool)),
            embedder,
            index_in_background=settings.index_in_background,
            index_linger_s=max(0, settings.index_linger_ms) / 1000,
        )
        # Every cosine threshold is in the reference scale; a model other than the reference
        # is measured on first use and its map stored, so the first opening pays once.
        await ensure_scale(pool, embedder)
        if migrate_layout:
            try:
                await store.ensure_layout()
            except Exception as exc:  # opening must not fail because Chroma is away
                log.warning("Chroma layout check skipped: %s", exc)
        if reindex_on_start:
            try:
                pending = await store.reindex()
                if pending:
                    log.info("indexed %d memories that were not yet in Chroma", pending)
            except Exception as exc:  # start-up must not fail because the index is behind
                log.warning("start-up reindex skipped: %s", exc)
        try:
            yield store
        finally:
            await store.close()


async def owner_key(pool: Database) -> bytes:
    """The installation's key for Chroma owner tags, created on first use (`owner_tag`)."""
    async with pool.acquire() as conn:
        await conn.execute(
            "INSERT INTO index_keys (name, key) VALUES ('chroma_owner', $1)"
            " ON CONFLICT (name) DO NOTHING",
            os.urandom(OWNER_KEY_BYTES),
        )
        key = await conn.fetchval("SELECT key FROM index_keys WHERE name = 'chroma_owner'")
    return bytes(key)


def utcnow() -> datetime:
    """The current time, tz-aware."""
    return datetime.now(UTC)


__all__ = [
    "OWN_TSV",
    "AuditEvent",
    "Candidates",
    "MemoryInputError",
    "MemoryStore",
    "cjk_owner",
    "open_store",
    "owner_key",
    "saturation_matches",
    "utcnow",
]
