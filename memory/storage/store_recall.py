"""Ranked recall through the per-user preload cache (the hot path of every turn).

A recall checks the user's `scope_versions` counter (one indexed lookup), searches the cached
`UserIndex` (loaded from Postgres on a miss), and records access statistics off the hot path.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from memory.observability.latency import RECALL_LATENCY
from memory.recall.ranking import RankingWeights
from memory.recall.representation import indexed_from_record
from memory.recall.retrieval import UserIndex
from memory.storage.recall_cache import ScopeEntry
from memory.storage.rows import RECORD_COLUMNS
from memory.storage.store_read import StoreReads
from memory.types import MemoryKind, MemoryRecord, Scope, ScoredMemory

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TurnRecall:
    """One turn's recall: evidence hits, long-term rules, and the user's data version."""

    hits: list[ScoredMemory]
    rules: list[MemoryRecord]
    version: int


def _strongest_long_term(entry: ScopeEntry, limit: int) -> list[MemoryRecord]:
    now = datetime.now(UTC)
    rows = [
        r
        for r in entry.records.values()
        if r.kind is not MemoryKind.EPISODIC and (r.expires_at is None or r.expires_at > now)
    ]
    rows.sort(key=lambda r: (r.pinned, r.confidence, r.importance, r.occurred_at), reverse=True)
    return rows[:limit]


class StoreRecall(StoreReads):
    """Recall, similarity and long-term lookups for one user, served from the preload cache."""

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
        relevant_only: bool = True,
    ) -> list[ScoredMemory]:
        """Ranked memories of this user for `query`, each with its score breakdown.

        Only memories that pass the absolute relevance floor (`weights.floor`) are returned,
        so an unrelated query gets nothing; `relevant_only=False` returns the ranked top k with
        each verdict (for `recall --explain`).
        """
        entry = await self._entry(scope)
        return await self._rank(
            entry, scope, query, k, weights, kinds, now, record_access, relevant_only
        )

    async def recall_turn(
        self, scope: Scope, query: str, *, k: int, weights: RankingWeights, rules: int = 12
    ) -> TurnRecall:
        """What one agent turn needs: ranked evidence, long-term rules and the user's version.

        One freshness check serves all three (the version also keys the profile cache).
        """
        entry = await self._entry(scope)
        hits = await self._rank(entry, scope, query, k, weights, None, None, True, True)
        return TurnRecall(hits, _strongest_long_term(entry, rules), entry.version)

    async def _rank(
        self,
        entry: ScopeEntry,
        scope: Scope,
        query: str,
        k: int,
        weights: RankingWeights | None,
        kinds: Collection[MemoryKind] | None,
        now: datetime | None,
        record_access: bool,
        relevant_only: bool,
    ) -> list[ScoredMemory]:
        started = time.perf_counter()
        vector = (await self.embedder.aembed([query]))[0]
        hits = entry.index.search(
            query,
            vector,
            k=k,
            now=now or datetime.now(UTC),
            weights=weights or RankingWeights(),
            kinds=kinds,
        )
        results = [
            ScoredMemory(record=entry.records[mid], score=b.total, breakdown=b)
            for mid, b in hits
            if mid in entry.records
            and (not relevant_only or b.relevance is None or b.relevance.passed)
        ]
        used = [r.record.id for r in results if r.breakdown.relevance is None
                or r.breakdown.relevance.passed]  # fmt: skip
        if record_access and used:
            self._spawn_access(scope, used, query)
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

    async def preload(self, scope: Scope) -> int:
        """Load the user's active memories into the recall cache (seed 003 "async preload").

        Call it when a session starts so the first turn's recall is already warm; returns how
        many memories were loaded.
        """
        return len((await self._entry(scope)).records)

    async def long_term(self, scope: Scope, *, limit: int = 12) -> list[MemoryRecord]:
        """Return the user's strongest long-term memories (pinned first, then by confidence)."""
        return _strongest_long_term(await self._entry(scope), limit)

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
