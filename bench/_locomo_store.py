"""The storage-backed LoCoMo backend: the project's real write and recall path.

Turns are written with `MemoryStore.write_many` (embedding, Postgres row, Chroma index) and
questions answered by `Recaller.recall_traced` (freshness check, then the tier chosen by
`recall_path`: "l1" ranks the user's whole preloaded index, "l2" never caches the user and ranks
the candidates Chroma and Postgres give), on an embedded PostgreSQL + embedded Chroma in a
temporary folder unless `--database-url` is given.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import datetime

from bench._locomo_backends import Hit
from bench._workdir import scratch_dir
from memory.recall.ranking import RankingWeights
from memory.settings import Settings
from memory.storage.store import MemoryStore, open_store
from memory.system import recaller
from memory.types import NewMemory, Scope


@dataclass
class StoreBackend:
    """`MemoryStore` end to end; the benchmark's "system" by default."""

    settings: Settings
    weights: RankingWeights = field(default_factory=RankingWeights)
    name: str = "system"
    recall_path: str = "l1"
    search_ms: list[float] = field(default_factory=list)
    paths: dict[str, int] = field(default_factory=dict)
    _stack: AsyncExitStack = field(default_factory=AsyncExitStack)
    _store: MemoryStore | None = None

    @classmethod
    def temporary(
        cls, base: Settings, database_url: str | None, recall_path: str = "l1"
    ) -> StoreBackend:
        """A backend on fresh embedded stores (or a given database) in a temp folder."""
        data = scratch_dir("lma-locomo-")
        settings = Settings(
            database_url=database_url,
            data_dir=data,
            embedding_model=base.embedding_model,
            embedding_model_dir=base.embedding_model_dir,
            chroma_prefix=f"locomo{int(time.time())}",
        )
        return cls(settings, recall_path=recall_path)

    async def _open(self) -> MemoryStore:
        if self._store is None:
            self._store = await self._stack.enter_async_context(open_store(self.settings))
        return self._store

    async def ingest(self, scope: Scope, memories: Sequence[NewMemory]) -> None:
        """Write the user's memories through the store (batches of 256)."""
        store = await self._open()
        for start in range(0, len(memories), 256):
            await store.write_many(scope, list(memories[start : start + 256]), reason="locomo")

    async def recall(self, scope: Scope, query: str, k: int, *, now: datetime) -> list[Hit]:
        """Recall through the store; the hits' turns come from each memory's provenance."""
        store = await self._open()
        tiers = recaller(store)
        tiers.preload_on_miss = False  # the path is chosen here, for every question
        if self.recall_path == "l1":
            await tiers.preload(scope)  # a no-op once the user is cached
        else:
            tiers.cache.invalidate(scope)
        started = time.perf_counter()
        traced = await tiers.recall_traced(
            scope,
            query,
            k=k,
            weights=self.weights,
            now=now,
            record_access=False,
            relevant_only=False,
        )
        self.search_ms.append((time.perf_counter() - started) * 1000.0)
        self.paths[traced.path] = self.paths.get(traced.path, 0) + 1
        return [
            Hit(
                [str(d) for d in r.record.provenance.get("dia_ids", [])],
                r.score,
                passed=(rel := r.breakdown.relevance) is None or rel.passed,
                relevance=r.breakdown.relevance,
            )
            for r in traced.hits
        ]

    async def close(self) -> None:
        """Close the store."""
        await self._stack.aclose()
