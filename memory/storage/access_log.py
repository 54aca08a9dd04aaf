"""Access statistics written in batches: one transaction for many recalls, off every turn.

Each recall that used memories bumps their `access_count` and `last_accessed` and appends one
`access` audit event (the ranking's access signal and the consolidation's decay read them). As
one transaction per recall that was ~10 ms of a connection and the event loop per turn, 30-90
ms at 10-50 concurrent turns; here recalls are collected for `linger_s` and written together:
the counters summed per memory in one UPDATE, the events in one multi-row INSERT.

Statistics, not memories: a process killed with a batch pending loses at most `linger_s` of
access counts (never a memory). A failed write (Postgres down) is kept and retried with the
next batch, up to `max_pending` recalls; beyond that the oldest are dropped, with a warning.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from memory.storage.batch_queue import BatchQueue
from memory.storage.db import Database
from memory.storage.rows import LOCK_IN_ID_ORDER
from memory.types import Scope

log = logging.getLogger(__name__)

# 250 ms: at ~10 turns/s (one worker, concurrency 1) five recalls share a transaction; the
# counts reach Postgres well before a consolidation run or an inspector could look.
DEFAULT_LINGER_S = 0.25
DEFAULT_MAX_PENDING = 10_000
RETRY_S = 1.0


@dataclass(frozen=True, slots=True)
class _Access:
    scope: Scope
    ids: tuple[str, ...]
    query_chars: int


class AccessLog:
    """Recalls' access statistics, queued and written by one worker task per event loop."""

    def __init__(
        self,
        pool: Database,
        *,
        linger_s: float = DEFAULT_LINGER_S,
        max_pending: int = DEFAULT_MAX_PENDING,
    ) -> None:
        """Write through `pool`, `linger_s` after the first of a batch."""
        self._pool = pool
        self.max_pending = max(1, max_pending)
        self._queue: BatchQueue[_Access] = BatchQueue(
            self._write, linger_s=linger_s, retry_s=RETRY_S
        )
        self.batches = 0
        self.written = 0
        self.dropped = 0

    @property
    def linger_s(self) -> float:
        """How long a batch waits for more recalls after its first."""
        return self._queue.linger_s

    @linger_s.setter
    def linger_s(self, value: float) -> None:
        self._queue.linger_s = max(0.0, value)

    @property
    def pending(self) -> int:
        """Recalls recorded and not yet written."""
        return self._queue.pending

    def add(self, scope: Scope, ids: Sequence[str], query_chars: int) -> None:
        """Queue one recall's use of `ids`; returns at once."""
        if not ids:
            return
        self._queue.put([_Access(scope, tuple(ids), max(0, int(query_chars)))])
        extra = self._queue.drop_oldest(self.max_pending)
        if extra:
            self.dropped += extra
            log.warning("access statistics backlog full; dropped the %d oldest", extra)

    async def flush(self) -> None:
        """Wait until what is queued has been written (or has failed and is kept for later)."""
        await self._queue.flush()

    async def close(self) -> None:
        """Write what is queued, then stop the worker."""
        await self.flush()
        await self._queue.close()

    async def _write(self, batch: list[_Access]) -> None:
        """One transaction for the batch; raises (and the batch is retried) if it fails."""
        counts: Counter[tuple[str, str, str]] = Counter()
        for access in batch:
            for memory_id in access.ids:
                counts[(access.scope.tenant_id, access.scope.user_id, memory_id)] += 1
        keys = list(counts)
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute(
                "WITH c AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[])"
                " AS c (t, u, id, n)),"
                " target AS (SELECT id FROM memories"
                f" WHERE (tenant_id, user_id, id) IN (SELECT t, u, id FROM c) {LOCK_IN_ID_ORDER})"
                " UPDATE memories AS m SET access_count = m.access_count + c.n,"
                " last_accessed = now() FROM c, target"
                " WHERE m.id = target.id AND m.tenant_id = c.t AND m.user_id = c.u AND m.id = c.id",
                [k[0] for k in keys],
                [k[1] for k in keys],
                [k[2] for k in keys],
                [counts[k] for k in keys],
            )
            await conn.executemany(
                "INSERT INTO memory_events (tenant_id, user_id, event, reason, detail)"
                " VALUES ($1, $2, 'access', 'recalled', $3::jsonb)",
                [
                    (
                        a.scope.tenant_id,
                        a.scope.user_id,
                        json.dumps({"ids": list(a.ids), "query_chars": a.query_chars}),
                    )
                    for a in batch
                ],
            )
        self.batches += 1
        self.written += len(batch)


__all__ = ["AccessLog"]
