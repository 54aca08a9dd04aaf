"""The read side of MemoryStore: scoped lookups and ranked recall through the preload cache."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Collection, Coroutine, Sequence
from typing import Any

import numpy as np

from memory.recall.representation import embed_text
from memory.storage.embedding import Embedder
from memory.storage.recall_cache import RecallCache
from memory.storage.rows import RECORD_COLUMNS, record_from_row, vector_from_bytes
from memory.storage.vector import VectorIndex
from memory.types import MemoryKind, MemoryRecord, NewMemory, Scope

log = logging.getLogger(__name__)


class StoreReads:
    """Scoped reads. Every public method takes the Scope first; none can omit it."""

    def __init__(self, pool: Any, index: VectorIndex, embedder: Embedder) -> None:
        self.pool = pool
        self.index = index
        self.embedder = embedder
        self.cache = RecallCache()
        self._background: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Run work off the hot path, keeping a reference so it is awaited on close."""
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def drain(self) -> None:
        """Wait for background work (access statistics) to finish."""
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)

    @staticmethod
    def embed_text(item: NewMemory | MemoryRecord) -> str:
        """The text a memory's vector is computed from (shared with the benchmark)."""
        return embed_text(
            item.content,
            speaker=item.provenance.get("speaker"),
            occurred_at=item.occurred_at,
            context=item.context,
        )

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

    async def vectors_for(self, rows: Sequence[Any]) -> tuple[list[MemoryRecord], np.ndarray]:
        """TEMP alias for merge (part A implements it): records and their stored vectors."""
        return await self._vectors_for(rows)

    async def bump_version(self, conn: Any, scope: Scope) -> int:
        """TEMP alias for merge (part A implements it): bump the user's memory version."""
        return await self._bump(conn, scope)

    async def _vectors_for(self, rows: Sequence[Any]) -> tuple[list[MemoryRecord], np.ndarray]:
        """Records and their stored vectors; re-embeds rows whose vector is missing or stale."""
        records = [record_from_row(r) for r in rows]
        vectors: list[np.ndarray | None] = [
            vector_from_bytes(r["embedding"], self.embedder.dim) for r in rows
        ]
        missing = [i for i, v in enumerate(vectors) if v is None]
        if missing:
            fresh = await self.embedder.aembed([self.embed_text(records[i]) for i in missing])
            for i, v in zip(missing, fresh, strict=True):
                vectors[i] = v
        if not records:
            return [], np.zeros((0, self.embedder.dim), dtype=np.float32)
        return records, np.vstack([v for v in vectors if v is not None])

    async def _bump(self, conn: Any, scope: Scope) -> int:
        version = await conn.fetchval(
            # Fresh rows start at epoch·2^32 (see migration 5); updates count up by one.
            "INSERT INTO scope_versions (tenant_id, user_id, version)"
            " VALUES ($1, $2, nextval('scope_epoch_seq') * 4294967296)"
            " ON CONFLICT (tenant_id, user_id) DO UPDATE"
            " SET version = scope_versions.version + 1 RETURNING version",
            scope.tenant_id,
            scope.user_id,
        )
        return int(version)
