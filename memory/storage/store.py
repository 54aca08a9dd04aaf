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
from memory.storage.store_read import StoreReads
from memory.storage.vector import VectorIndex, VectorIndexError
from memory.types import MemoryRecord, NewMemory, Scope, Status

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


class MemoryStore(StoreReads):
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
        return True

    async def reindex(self, *, batch: int = 500) -> int:
        """Index every row not yet in Chroma (after an outage, or a rebuild). Admin operation."""
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

    # -- changing --------------------------------------------------------------------------

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
            await self._event(
                conn,
                scope,
                memory_id,
                event or status.value,
                reason,
                {"superseded_by": superseded_by} if superseded_by else {},
            )
            await self._bump(conn, scope)
        self.cache.invalidate(scope)
        return record_from_row(row)

    async def reinforce(
        self, scope: Scope, memory_id: str, *, confidence_step: float = 0.05, reason: str
    ) -> MemoryRecord | None:
        """A near-duplicate was seen again: raise confidence and access stats, no new copy."""
        async with self.pool.acquire() as conn, conn.transaction():
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
            await self._event(conn, scope, memory_id, "update", reason, {})
        return record_from_row(row)

    async def delete(self, scope: Scope, memory_id: str, *, reason: str) -> dict[str, int]:
        """Delete one memory from Postgres and Chroma; return a receipt of what was removed."""
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
                await self._event(conn, scope, memory_id, "delete", reason, {})
                await self._bump(conn, scope)
        self.cache.invalidate(scope)
        chroma = 0
        if n:
            try:
                await self.index.delete(scope, [memory_id])
                chroma = 1
            except VectorIndexError as exc:
                log.warning("Chroma unavailable while deleting %s: %s", memory_id, exc)
        return {
            "memories": n,
            "versions": int(versions.split()[-1]),
            "audit_events_redacted": int(events.split()[-1]),
            "chroma_entries": chroma,
        }

    async def touch_thread(self, scope: Scope, thread_id: str) -> None:
        """Remember that `thread_id` belongs to this user (for deletion of their checkpoints)."""
        async with self.pool.acquire() as conn:
            await conn.execute(
                "INSERT INTO user_threads (tenant_id, user_id, thread_id) VALUES ($1, $2, $3)"
                " ON CONFLICT (tenant_id, user_id, thread_id) DO UPDATE SET last_seen = now()",
                scope.tenant_id,
                scope.user_id,
                thread_id,
            )

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
            await self._event(conn, scope, None, "consent", "granted" if consent else "revoked", {})

    # -- helpers ---------------------------------------------------------------------------

    async def _event(
        self,
        conn: Any,
        scope: Scope,
        memory_id: str | None,
        event: str,
        reason: str,
        detail: dict[str, Any],
    ) -> None:
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
            await self._event(conn, scope, memory_id, event, reason, detail or {})


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
    url = await asyncio.to_thread(database_url, settings)
    embedder = await asyncio.to_thread(
        get_embedder, settings.embedding_model, settings.embedding_model_dir
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
