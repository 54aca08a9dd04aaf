"""Background indexing: Chroma upserts of rows already written, batched off the writer's path.

Postgres is the record and every row is written with `indexed_at = NULL`; recall already finds
rows Chroma has not indexed yet (L1 holds them, L2 reads unindexed rows from Postgres). So the
Chroma upsert, ~40 ms against a `chroma run` server for one memory and the slowest step of a
turn's write, need not be waited for: the writer hands the rows and their vectors here and
returns. A worker task upserts what has queued up (everything submitted while the previous batch
ran goes in one call, so 50 concurrent turns cost a few upserts, not 50) and marks the rows
indexed.

Nothing is lost whatever happens to the queue. It lives in memory only, but every row in it is
also `indexed_at IS NULL` in Postgres:

- close: `flush()` indexes what is queued before the store closes;
- a crash: the rows stay unindexed, and the next store's start-up catch-up (`reindex`) or
  `memory-agent reindex` indexes them;
- Chroma down: the sink reports the failure, the store's probe notices Chroma's return and
  catches up every unindexed row;
- a backlog over `max_pending` (Chroma slower than the writes for long): new submissions are not
  queued (the vectors would pile up in memory) and a catch-up runs once the queue has drained.

Used by `MemoryStore.write_many` and reusable by any bulk writer that wants the same behaviour.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

import numpy as np

from memory.storage.batch_queue import BatchQueue
from memory.storage.embedding import Vectors
from memory.types import MemoryRecord, Scope

log = logging.getLogger(__name__)

# How long the worker waits after the first submission before upserting, so writes arriving
# together share one Chroma call. 20 ms is under a turn's own overhead, and a row is recalled
# meanwhile anyway (unindexed rows are read from Postgres).
DEFAULT_LINGER_S = 0.02
# ~1.6 KB of vector and record per memory: 10,000 queued memories hold ~16 MB at most.
DEFAULT_MAX_PENDING = 10_000

Sink = Callable[[Sequence[MemoryRecord], Vectors], Awaitable[bool]]
CatchUp = Callable[[], Awaitable[int]]


class BackgroundIndexer:
    """A queue of written rows awaiting their Chroma upsert, drained by one worker task.

    `sink(records, vectors)` upserts and marks the rows indexed, returning False when Chroma
    is down (the rows stay unindexed for the catch-up); `catch_up()` indexes every unindexed
    row (the store's `reindex`). Create and use it on one event loop.
    """

    def __init__(
        self,
        sink: Sink,
        catch_up: CatchUp,
        *,
        linger_s: float = DEFAULT_LINGER_S,
        max_pending: int = DEFAULT_MAX_PENDING,
    ) -> None:
        """Index through `sink`; `catch_up` after a dropped submission or a failed batch."""
        self._sink = sink
        self._catch_up = catch_up
        self.max_pending = max(1, max_pending)
        self._queue: BatchQueue[tuple[MemoryRecord, np.ndarray]] = BatchQueue(
            self._index, linger_s=linger_s, on_drained=self._drained
        )
        self._behind = False  # some rows were not queued or not indexed: catch up later
        self._closed = False
        self.batches = 0  # upserts made (for benchmarks: rows per upsert = indexed / batches)
        self.indexed = 0
        self.dropped = 0  # rows left to the catch-up because the queue was full

    @property
    def linger_s(self) -> float:
        """How long a batch waits for more rows after its first."""
        return self._queue.linger_s

    @property
    def pending(self) -> int:
        """Rows submitted and not yet upserted (queued or in the running batch)."""
        return self._queue.pending

    def submit(self, scope: Scope, records: Sequence[MemoryRecord], vectors: Vectors) -> None:
        """Queue stored rows (of `scope`) for indexing; returns at once.

        After `close()`, or with the queue full, the rows are left to the catch-up instead.
        """
        if not records:
            return
        if len(records) != len(vectors):
            raise ValueError(f"{len(records)} records but {len(vectors)} vectors")
        for record in records:
            if record.scope != scope:
                raise ValueError("every record must belong to the scope it is submitted for")
        if self._closed or self.pending + len(records) > self.max_pending:
            self.dropped += len(records)
            self._behind = True
            log.info("index queue full or closed; %d memories left to the catch-up", len(records))
            if not self._closed:
                self._queue.wake()  # it catches up once what is queued is indexed
            return
        self._queue.put(list(zip(records, vectors, strict=True)))

    async def flush(self) -> None:
        """Wait until every row submitted so far has been upserted (or found Chroma down)."""
        await self._queue.flush(force=self._behind)

    async def close(self) -> None:
        """Flush, then stop the worker; later submissions are left to the catch-up."""
        await self.flush()
        self._closed = True
        await self._queue.close()

    async def _drained(self) -> None:
        if self._behind:
            await self._run_catch_up()

    async def _index(self, batch: list[tuple[MemoryRecord, np.ndarray]]) -> None:
        records = [r for r, _ in batch]
        vectors = np.vstack([v for _, v in batch]).astype(np.float32, copy=False)
        try:
            done = await self._sink(records, vectors)
        except Exception as exc:  # Postgres trouble: the rows stay unindexed, caught up later
            log.warning("indexing %d memories failed; left to the catch-up: %s", len(batch), exc)
            self._behind = True
            return
        if done:
            self.batches += 1
            self.indexed += len(records)

    async def _run_catch_up(self) -> None:
        try:
            done = await self._catch_up()
        except Exception as exc:  # still failing: the next start-up or probe catches up
            log.warning("index catch-up failed: %s", exc)
            return
        self._behind = False
        if done:
            log.info("index catch-up: %d memories indexed", done)


__all__ = ["DEFAULT_LINGER_S", "DEFAULT_MAX_PENDING", "BackgroundIndexer"]
