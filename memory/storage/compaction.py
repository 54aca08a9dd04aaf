"""Physical compaction after deletions: VACUUM, CHECKPOINT and Chroma's SQLite file, coalesced.

A deletion removes its rows (and blanks Chroma's log entries) at once, in its own work; what
comes after is maintenance of the files: `VACUUM` of the tables the rows left (their space is
free for reuse at once rather than whenever autovacuum gets there), then `CHECKPOINT` (the WAL
segments that hold the deleted rows are no longer needed for crash recovery), then `VACUUM` of
Chroma's `chroma.sqlite3` (its free pages held the blanked log text). Each is work for the
whole server (a checkpoint writes every dirty page; an SQLite VACUUM rewrites the file under
an exclusive lock), and deletions are never rate-limited, so a deletion that removed nothing
asks for none of it, and passes are coalesced: at most one per `COMPACTION_INTERVAL_SECONDS`
per store (one per server process). A request when none ran within the interval runs at once,
and its caller can report it; later requests in the interval are merged into one pass at its
end, which a caller reports as deferred. A pass still owed when the store closes runs then.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import asyncpg

from memory.settings import Settings
from memory.storage.db import Database
from memory.storage.vector_log import compact_log

log = logging.getLogger(__name__)

COMPACTION_INTERVAL_SECONDS = 60.0
"""At most one compaction pass per this many seconds and store."""


@dataclass(slots=True)
class Pass:
    """What one compaction pass did."""

    vacuumed: list[str] = field(default_factory=list)
    checkpointed: bool = False  # False also when the database role may not run CHECKPOINT
    chroma_compacted: bool = False


async def vacuum(pool: Database, tables: Iterable[str]) -> list[str]:
    """VACUUM each table (outside a transaction, as VACUUM must run); the ones vacuumed."""
    done = []
    async with pool.acquire() as conn:
        for table in tables:
            if await conn.fetchval("SELECT to_regclass($1)", table) is None:
                continue
            try:
                await conn.execute(f'VACUUM "{table}"')
                done.append(table)
            except Exception as exc:  # another session's lock: autovacuum will do it later
                log.warning("VACUUM %s skipped: %s", table, exc)
    return done


async def checkpoint(pool: Database) -> bool:
    """CHECKPOINT, after a VACUUM; False when the role may not (superuser or pg_checkpoint).

    The checkpoint writes the vacuumed pages out, so the WAL segments that hold the deleted rows
    are recycled (or archived) instead of staying until the next scheduled checkpoint.
    """
    try:
        async with pool.acquire() as conn:
            await conn.execute("CHECKPOINT")
    except asyncpg.PostgresError as exc:  # a role without the right: the server's own schedule
        log.info("CHECKPOINT after a deletion not allowed: %s", exc)
        return False
    return True


class Compaction:
    """The compaction owed after one store's deletions, run at most once per interval."""

    def __init__(
        self, pool: Database, settings: Settings, interval_s: float = COMPACTION_INTERVAL_SECONDS
    ) -> None:
        """`settings` locate Chroma's file (`vector_log.log_file`)."""
        self.interval_s = interval_s
        self._pool = pool
        self._settings = settings
        self._tables: dict[str, None] = {}  # an ordered set: the order deletions named them
        self._chroma = False
        self._last: float | None = None  # time.monotonic() at the end of the last pass
        self._lock = asyncio.Lock()
        self._later: asyncio.Task[None] | None = None
        self._now = asyncio.Event()  # set at close: a pass owed runs without waiting

    @property
    def owed(self) -> bool:
        """Whether a pass is waiting (requested, not run yet)."""
        return bool(self._tables) or self._chroma

    def _wait_s(self) -> float:
        return 0.0 if self._last is None else self._last + self.interval_s - time.monotonic()

    async def request(self, tables: Iterable[str] = (), *, chroma: bool = False) -> Pass | None:
        """Ask for a pass over `tables` (and Chroma's file); the pass if it ran now, else None.

        It runs now when no pass ran within the interval and none is running; otherwise it
        joins the one pass scheduled for the interval's end. Asking for nothing does nothing.
        """
        self._tables.update(dict.fromkeys(tables))
        self._chroma = self._chroma or chroma
        if not self.owed:
            return None
        if self._wait_s() <= 0 and not self._lock.locked():
            async with self._lock:
                return await self._run()
        if self._later is None or self._later.done():
            self._later = asyncio.get_running_loop().create_task(self._run_later())
        return None

    async def _run_later(self) -> None:
        while self.owed:
            wait = self._wait_s()
            if wait > 0 and not self._now.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._now.wait(), wait)
            async with self._lock:
                if self._wait_s() > 0 and not self._now.is_set():
                    continue  # a pass ran while this one waited for the lock: its interval
                try:
                    await self._run()
                except Exception:  # the rows are gone already; autovacuum does the rest
                    log.exception("deferred compaction after deletions failed")

    async def _run(self) -> Pass:
        tables, chroma = list(self._tables), self._chroma
        self._tables, self._chroma = {}, False
        done = Pass()
        try:
            if tables:
                done.vacuumed = await vacuum(self._pool, tables)
                done.checkpointed = await checkpoint(self._pool)
            if chroma:
                done.chroma_compacted = await compact_log(self._settings)
        finally:
            self._last = time.monotonic()
        return done

    async def close(self) -> None:
        """Run a pass still owed now (the store is closing) instead of at the interval's end."""
        self._now.set()
        if self._later is not None:
            await asyncio.gather(self._later, return_exceptions=True)
            self._later = None
        if self.owed:
            async with self._lock:
                try:
                    await self._run()
                except Exception:
                    log.exception("compaction at close failed")


__all__ = ["COMPACTION_INTERVAL_SECONDS", "Compaction", "Pass", "checkpoint", "vacuum"]
