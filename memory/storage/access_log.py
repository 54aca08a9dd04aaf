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

import asyncio
import contextlib
import json
import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from memory.storage.db import Database
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
        self.linger_s = max(0.0, linger_s)
        self.max_pending = max(1, max_pending)
        self._queue: list[_Access] = []
        self._busy = 0
        self._wake: asyncio.Event | None = None
        self._hurry: asyncio.Event | None = None
        self._idle: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self.batches = 0
        self.written = 0
        self.dropped = 0

    @property
    def pending(self) -> int:
        """Recalls recorded and not yet written."""
        return len(self._queue) + self._busy

    def add(self, scope: Scope, ids: Sequence[str], query_chars: int) -> None:
        """Queue one recall's use of `ids`; returns at once."""
        if not ids:
            return
        self._queue.append(_Access(scope, tuple(ids), max(0, int(query_chars))))
        if len(self._queue) > self.max_pending:
            extra = len(self._queue) - self.max_pending
            del self._queue[:extra]
            self.dropped += extra
            log.warning("access statistics backlog full; dropped the %d oldest", extra)
        if self._wake is None or self._hurry is None or self._idle is None:
            self._wake, self._hurry, self._idle = asyncio.Event(), asyncio.Event(), asyncio.Event()
        self._idle.clear()
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())
        self._wake.set()

    async def flush(self) -> None:
        """Wait until what is queued has been written (or has failed and is kept for later)."""
        if self._task is None or self._task.done() or self._idle is None or self._hurry is None:
            return
        if self.pending:
            self._hurry.set()
            await asyncio.shield(self._idle.wait())

    async def close(self) -> None:
        """Write what is queued, then stop the worker."""
        await self.flush()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        assert self._wake is not None and self._hurry is not None and self._idle is not None
        while True:
            await self._wake.wait()
            if self.linger_s and not self._hurry.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._hurry.wait(), self.linger_s)
            self._wake.clear()
            self._hurry.clear()
            batch, self._queue = self._queue, []
            self._busy = len(batch)
            try:
                await self._write(batch)
                self.batches += 1
                self.written += len(batch)
            except Exception as exc:  # kept for the next batch: statistics never fail a turn
                log.warning("writing access statistics failed; retrying later: %s", exc)
                self._queue[:0] = batch
                self._busy = 0
                self._idle.set()  # a flush waits for this attempt only, not for Postgres
                await asyncio.sleep(RETRY_S)
                self._wake.set()
                continue
            finally:
                self._busy = 0
            if not self._queue:
                self._idle.set()

    async def _write(self, batch: list[_Access]) -> None:
        counts: Counter[tuple[str, str, str]] = Counter()
        for access in batch:
            for memory_id in access.ids:
                counts[(access.scope.tenant_id, access.scope.user_id, memory_id)] += 1
        keys = list(counts)
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute(
                "UPDATE memories AS m SET access_count = m.access_count + c.n,"
                " last_accessed = now()"
                " FROM unnest($1::text[], $2::text[], $3::text[], $4::int[]) AS c(t, u, id, n)"
                " WHERE m.tenant_id = c.t AND m.user_id = c.u AND m.id = c.id",
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


__all__ = ["AccessLog"]
