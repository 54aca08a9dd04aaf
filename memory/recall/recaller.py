"""Ranked recall through the per-user preload cache (the hot path of every turn).

Storage keeps rows and vectors; this module ranks them. A `Recaller` holds one store and that
store's `RecallCache`. A recall checks the user's data version (one indexed lookup), searches
the cached `UserIndex` (loaded through `store.active_memories` on a miss), and has the store
record access statistics off the hot path.

There is one Recaller per store: it registers its cache on `store.cache`, so the store's own
writes update it in place and its changes drop stale entries. `recaller_for(store)` returns that
Recaller, creating it on first use; the composition point (`agent/resources.py`) creates it
first with `on_latency` (the metrics histogram), so this module imports no observability code.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from memory.recall.cache import RecallCache, ScopeEntry
from memory.recall.ranking import RankingWeights
from memory.recall.representation import indexed_from_record
from memory.recall.retrieval import UserIndex
from memory.storage.cache_sync import Change
from memory.storage.embedding import Vectors
from memory.storage.store import MemoryStore
from memory.types import MemoryKind, MemoryRecord, Scope, ScoredMemory

log = logging.getLogger(__name__)

LatencyObserver = Callable[[float], None]  # seconds one ranked recall took

# A process's own write reaches its own cache listener too, possibly before the writer has
# moved its cache entry to the new version in place (`written` runs one pool-release round-trip,
# ~1 ms, after the commit). An entry exactly one version behind is re-checked after this grace
# instead of dropped at once, so a writer does not reload its user's memories after each of its
# writes. Another process's write is thus dropped ~50 ms after its commit; recalls never wait
# for it (their version check already refuses a stale entry).
OWN_WRITE_GRACE_S = 0.05


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


class Recaller:
    """Recall, similarity and long-term lookups for one user, served from the preload cache."""

    def __init__(
        self,
        store: MemoryStore,
        *,
        cache: RecallCache | None = None,
        on_latency: LatencyObserver | None = None,
    ) -> None:
        self.store = store
        self.cache = cache or RecallCache()
        self.on_latency = on_latency
        store.cache.add(self)

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
        entry = await self.entry(scope)
        return await self._rank(
            entry, scope, query, k, weights, kinds, now, record_access, relevant_only
        )

    async def recall_turn(
        self, scope: Scope, query: str, *, k: int, weights: RankingWeights, rules: int = 12
    ) -> TurnRecall:
        """What one agent turn needs: ranked evidence, long-term rules and the user's version.

        One freshness check serves all three (the version also keys the profile cache).
        """
        entry = await self.entry(scope)
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
        vector = (await self.store.embedder.aembed([query]))[0]
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
            # Access statistics are written off the hot path: a recall never waits for a write.
            self.store.spawn(self._record_access(scope, used, query))
        if self.on_latency is not None:
            self.on_latency(time.perf_counter() - started)
        return results

    async def similar(
        self, scope: Scope, text: str, *, k: int = 5, kinds: Collection[MemoryKind] | None = None
    ) -> list[tuple[MemoryRecord, float]]:
        """Active memories of this user nearest to `text` by cosine (for dedupe and conflicts)."""
        entry = await self.entry(scope)
        if not entry.records:
            return []
        vector = (await self.store.embedder.aembed([text]))[0]
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
        """Load the user's active memories into the recall cache.

        Call it when a session starts so the first turn's recall is already warm; returns how
        many memories were loaded.
        """
        return len((await self.entry(scope)).records)

    async def long_term(self, scope: Scope, *, limit: int = 12) -> list[MemoryRecord]:
        """Return the user's strongest long-term memories (pinned first, then by confidence)."""
        return _strongest_long_term(await self.entry(scope), limit)

    async def entry(self, scope: Scope) -> ScopeEntry:
        """The user's cached index, reloaded from the store if their data version moved."""
        version = await self.store.scope_version(scope)
        entry = self.cache.get(scope, version)
        if entry is not None:
            return entry
        records, vectors = await self.store.active_memories(scope)
        entry = ScopeEntry(version=version, index=UserIndex())
        for record, vector in zip(records, vectors, strict=True):
            entry.put(record, indexed_from_record(record, vector))
        self.cache.put(scope, entry)
        return entry

    async def _record_access(self, scope: Scope, ids: list[str], query: str) -> None:
        try:
            await self.store.record_access(scope, ids, query)
            entry = self.cache.peek(scope)
            if entry is not None:
                for mid in ids:
                    if mid in entry.records:
                        entry.records[mid].access_count += 1
        except Exception as exc:  # statistics must never break a turn
            log.warning("could not record access statistics: %s", exc)

    # -- the store's change notices (`RowCache`) ---------------------------------------------

    def written(
        self, scope: Scope, records: Sequence[MemoryRecord], vectors: Vectors, version: int
    ) -> None:
        """Add this process's new memories to the cached entry without a reload.

        Only if nothing else changed the user in between (then the next recall reloads).
        """
        entry = self.cache.peek(scope)
        if entry is None or entry.version != version - 1:
            self.cache.invalidate(scope)
            return
        for record, vector in zip(records, vectors, strict=True):
            if record.status.value == "active":
                entry.put(record, indexed_from_record(record, vector))
        self.cache.bump(scope, version, delta_size=len(records))

    def invalidate(self, scope: Scope) -> None:
        """Drop the user's cached entry."""
        self.cache.invalidate(scope)

    def clear(self) -> None:
        """Drop every cached entry."""
        self.cache.clear()

    # -- another process's changes (`CacheSync` listener) ------------------------------------

    def on_change(self, change: Change) -> None:
        """Drop the entry a notified change made stale (memories only, not settings)."""
        if change.settings_only:  # the recall cache holds memories only
            return
        entry = self.cache.peek(change.scope)
        version = change.version
        if entry is not None and version is not None and entry.version == version - 1:
            loop = asyncio.get_running_loop()
            loop.call_later(OWN_WRITE_GRACE_S, self._drop_if_behind, change.scope, version)
        else:
            self._drop_if_behind(change.scope, version)

    def _drop_if_behind(self, scope: Scope, version: int | None) -> None:
        entry = self.cache.peek(scope)
        if entry is not None and (version is None or entry.version < version):
            self.cache.invalidate(scope)


def recaller_for(store: MemoryStore, *, on_latency: LatencyObserver | None = None) -> Recaller:
    """The store's Recaller, created (and registered on `store.cache`) on first use.

    `on_latency` is set on it if given, so the composition point can attach the metrics
    histogram whether or not something recalled first.
    """
    for cache in store.cache.caches:
        if isinstance(cache, Recaller):
            if on_latency is not None:
                cache.on_latency = on_latency
            return cache
    return Recaller(store, on_latency=on_latency)


__all__ = ["OWN_WRITE_GRACE_S", "LatencyObserver", "Recaller", "TurnRecall", "recaller_for"]
