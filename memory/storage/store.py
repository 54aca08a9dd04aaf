"""MemoryStore: Postgres is the system of record, Chroma the index, every call scoped.

Write path: embed → insert the row (with its vector and `indexed_at = NULL`) and its audit event
in one transaction → upsert into Chroma → set `indexed_at`. If Chroma is down the row is kept and
`reindex()` (run at start-up and by `memory-agent reindex`) indexes it later: nothing is lost.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

from memory.settings import Settings
from memory.storage.embedding import get_embedder
from memory.storage.pg import database_url, open_pool
from memory.storage.rows import INSERT_SQL, RECORD_COLUMNS, insert_params, new_id, record_from_row
from memory.storage.store_changes import StoreChanges
from memory.storage.vector import VectorIndex, VectorIndexError
from memory.types import MemoryRecord, NewMemory, Scope

log = logging.getLogger(__name__)

MAX_CONTENT_CHARS = 20_000


class MemoryInputError(ValueError):
    """A memory that cannot be stored as given (empty, too large, not text)."""


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


class MemoryStore(StoreChanges):
    """Scoped reads and writes of memories. Create with `open_store()`."""

    # -- writing ---------------------------------------------------------------------------

    async def write(self, scope: Scope, item: NewMemory, *, reason: str = "") -> MemoryRecord:
        """Store one memory (already gated and redacted) and index it."""
        return (await self.write_many(scope, [item], reason=reason))[0]

    async def write_many(
        self, scope: Scope, items: Sequence[NewMemory], *, reason: str = ""
    ) -> list[MemoryRecord]:
        """Store several memories of one user in one transaction, then index them."""
        if not items:
            return []
        for item in items:
            _check_content(item)
        vectors = await self.embedder.aembed([self.embed_text(i) for i in items])
        records: list[MemoryRecord] = []
        async with self.pool.acquire() as conn, conn.transaction():
            for item, vector in zip(items, vectors, strict=True):
                params = insert_params(
                    new_id(), scope.tenant_id, scope.user_id, item, vector, self.embedder.name
                )
                records.append(record_from_row(await conn.fetchrow(INSERT_SQL, *params)))
            await conn.executemany(
                "INSERT INTO memory_events (tenant_id, user_id, memory_id, event, reason, detail)"
                " VALUES ($1, $2, $3, 'write', $4, $5::jsonb)",
                [
                    (scope.tenant_id, scope.user_id, r.id, reason or "stored", _write_detail(r))
                    for r in records
                ],
            )
            version = await self._bump(conn, scope)
        self._cache_add(scope, records, vectors, version)
        await self._index(scope, records, vectors)
        return records

    async def index_records(self, scope: Scope, records: list[MemoryRecord], vectors: Any) -> bool:
        """TEMP alias for merge (part A implements it): index records, mark them indexed."""
        return await self._index(scope, records, vectors)

    async def _index(self, scope: Scope, records: list[MemoryRecord], vectors: Any) -> bool:
        try:
            await self.index.upsert(records, vectors)
        except VectorIndexError as exc:
            log.warning("Chroma unavailable; %d memories kept for reindex: %s", len(records), exc)
            return False
        async with self.pool.acquire() as conn:
            await conn.execute(
                "UPDATE memories SET indexed_at = now() WHERE tenant_id = $1 AND user_id = $2"
                " AND id = ANY($3::text[])",
                scope.tenant_id,
                scope.user_id,
                [r.id for r in records],
            )
        await self.retry_deletions()  # Chroma answers again: pay the deletions it missed
        return True

    async def reindex(self, *, batch: int = 500) -> int:
        """Index every row not yet in Chroma (after an outage, or a rebuild). Admin operation.

        Deletions Chroma missed while it was down are retried first.
        """
        await self.retry_deletions()
        done = 0
        while True:
            async with self.pool.acquire() as conn:
                rows = await conn.fetch(
                    f"SELECT {RECORD_COLUMNS}, embedding FROM memories "
                    "WHERE indexed_at IS NULL AND status <> 'deleted' ORDER BY created_at LIMIT $1",
                    batch,
                )
            if not rows:
                return done
            by_scope: dict[Scope, list[Any]] = {}
            for row in rows:
                by_scope.setdefault(Scope(row["tenant_id"], row["user_id"]), []).append(row)
            for scope, scoped in by_scope.items():
                records, vectors = await self._vectors_for(scoped)
                if not await self._index(scope, records, vectors):
                    return done
                done += len(records)


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
    settings: Settings | None = None, *, reindex_on_start: bool = True
) -> AsyncIterator[MemoryStore]:
    """Open the stores (embedded defaults unless URLs are set) and close them cleanly."""
    settings = settings or Settings.from_env()
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
        store = MemoryStore(pool, VectorIndex(settings), embedder)
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
            await store.drain()


def utcnow() -> datetime:
    """The current time, tz-aware."""
    return datetime.now(UTC)


__all__ = ["MemoryInputError", "MemoryStore", "open_store", "utcnow"]
