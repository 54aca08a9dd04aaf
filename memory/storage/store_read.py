"""The read side of MemoryStore: scoped lookups and ranked recall through the preload cache."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Collection, Coroutine, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from memory.observability.metrics_histogram import RECALL_LATENCY
from memory.recall.ranking import RankingWeights
from memory.recall.representation import embed_text, indexed_from_record
from memory.recall.retrieval import UserIndex
from memory.storage.embedding import Embedder
from memory.storage.recall_cache import RecallCache, ScopeEntry
from memory.storage.rows import RECORD_COLUMNS, record_from_row, vector_from_bytes
from memory.storage.vector import VectorIndex
from memory.types import MemoryKind, MemoryRecord, NewMemory, Scope, ScoredMemory

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

    # -- recall ----------------------------------------------------------------------------

    async def recall(
        self,
        scope: Scope,
        query: str,
        *,
        k: int = 8,
        weights: RankingWeights | None = None,
        kinds: Collection[MemoryKind] | None = None,
        now: datetime | None = None,
        record_access: bool = True,
    ) -> list[ScoredMemory]:
        """Ranked memories of this user for `query`, each with its score breakdown."""
        started = time.perf_counter()
        weights = weights or RankingWeights()
        vector = (await self.embedder.aembed([query]))[0]
        entry = await self._entry(scope)
        hits = entry.index.search(
            query, vector, k=k, now=now or datetime.now(UTC), weights=weights, kinds=kinds
        )
        results = [
            ScoredMemory(record=entry.records[mid], score=b.total, breakdown=b)
            for mid, b in hits
            if mid in entry.records
        ]
        if record_access and results:
            self._spawn_access(scope, [r.record.id for r in results], query)
        RECALL_LATENCY.observe(time.perf_counter() - started)
        return results

    async def similar(
        self, scope: Scope, text: str, *, k: int = 5, kinds: Collection[MemoryKind] | None = None
    ) -> list[tuple[MemoryRecord, float]]:
        """Active memories of this user nearest to `text` by cosine (for dedupe and conflicts)."""
        entry = await self._entry(scope)
        if not entry.records:
            return []
        vector = (await self.embedder.aembed([text]))[0]
        ids = list(entry.records)
        matrix = np.vstack([entry.vectors[i] for i in ids])
        sims = matrix @ vector
        order = np.argsort(-sims)
        out: list[tuple[MemoryRecord, float]] = []
        for pos in order:
            record = entry.records[ids[pos]]
            if kinds and record.kind not in kinds:
                continue
            out.append((record, float(sims[pos])))
            if len(out) >= k:
                break
        return out

    async def consent(self, scope: Scope) -> bool:
        """Whether the user consents to memories being kept (default yes until they opt out)."""
        async with self.pool.acquire() as conn:
            value = await conn.fetchval(
                "SELECT consent FROM user_settings WHERE tenant_id = $1 AND user_id = $2",
                scope.tenant_id,
                scope.user_id,
            )
        return True if value is None else bool(value)

    async def preload(self, scope: Scope) -> int:
        """Load the user's active memories into the recall cache (seed 003 "async preload").

        Call it when a session starts so the first turn's recall is already warm; returns how
        many memories were loaded.
        """
        return len((await self._entry(scope)).records)

    async def long_term(self, scope: Scope, *, limit: int = 12) -> list[MemoryRecord]:
        """Return the user's strongest long-term memories (pinned first, then by confidence)."""
        entry = await self._entry(scope)
        now = datetime.now(UTC)
        rows = [
            r
            for r in entry.records.values()
            if r.kind is not MemoryKind.EPISODIC and (r.expires_at is None or r.expires_at > now)
        ]
        rows.sort(key=lambda r: (r.pinned, r.confidence, r.importance, r.occurred_at), reverse=True)
        return rows[:limit]

    async def _entry(self, scope: Scope) -> ScopeEntry:
        async with self.pool.acquire() as conn:
            version = await conn.fetchval(
                "SELECT version FROM scope_versions WHERE tenant_id = $1 AND user_id = $2",
                scope.tenant_id,
                scope.user_id,
            )
            version = int(version or 0)
            entry = self.cache.get(scope, version)
            if entry is not None:
                return entry
            rows = await conn.fetch(
                f"SELECT {RECORD_COLUMNS}, embedding FROM memories WHERE tenant_id = $1"
                " AND user_id = $2 AND status = 'active'"
                " AND (expires_at IS NULL OR expires_at > now())",
                scope.tenant_id,
                scope.user_id,
            )
        records, vectors = await self._vectors_for(rows)
        entry = ScopeEntry(version=version, index=UserIndex())
        for record, vector in zip(records, vectors, strict=True):
            entry.put(record, indexed_from_record(record, vector))
        self.cache.put(scope, entry)
        return entry

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

    def _cache_add(
        self, scope: Scope, records: list[MemoryRecord], vectors: np.ndarray, version: int
    ) -> None:
        # Keep this process's cache current without a reload, but only if nothing else
        # changed the user in between (then the next recall reloads).
        entry = self.cache.peek(scope)
        if entry is None or entry.version != version - 1:
            self.cache.invalidate(scope)
            return
        for record, vector in zip(records, vectors, strict=True):
            if record.status.value == "active":
                entry.put(record, indexed_from_record(record, vector))
        self.cache.bump(scope, version, delta_size=len(records))

    def _spawn_access(self, scope: Scope, ids: list[str], query: str) -> None:
        # Access statistics are written off the hot path: a recall never waits for a write.
        self.spawn(self._record_access(scope, ids, query))

    async def _record_access(self, scope: Scope, ids: list[str], query: str) -> None:
        try:
            async with self.pool.acquire() as conn, conn.transaction():
                await conn.execute(
                    "UPDATE memories SET access_count = access_count + 1, last_accessed = now()"
                    " WHERE tenant_id = $1 AND user_id = $2 AND id = ANY($3::text[])",
                    scope.tenant_id,
                    scope.user_id,
                    ids,
                )
                await conn.execute(
                    "INSERT INTO memory_events (tenant_id, user_id, event, reason, detail)"
                    " VALUES ($1, $2, 'access', 'recalled', $3::jsonb)",
                    scope.tenant_id,
                    scope.user_id,
                    json.dumps({"ids": ids, "query_chars": len(query)}),
                )
            entry = self.cache.peek(scope)
            if entry is not None:
                for mid in ids:
                    if mid in entry.records:
                        entry.records[mid].access_count += 1
        except Exception as exc:  # statistics must never break a turn
            log.warning("could not record access statistics: %s", exc)
