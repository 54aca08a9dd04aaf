"""Per-user Postgres advisory locks: the memory write lock and the consolidation run locks.

Both keep two workers (processes, connections) from interleaving on one user; they differ in
what they guard and how long they are held.

**The write lock** (`user_write_lock`).
Two agents (two processes, two connections) may write the same slot of a user at once, say
"I prefer tea" and "I prefer coffee". Each write reads the user's similar memories, decides with
`conflicts.resolve`, then writes. Unserialised, both read before either commits, both insert, and
the contradiction is never seen. A PostgreSQL advisory lock on the user's key, held from that read
to the last commit, makes the second writer wait and then see the first, so the conflict policy
decides. Other users' writes do not wait: the key is per user.

The lock is session-level (the store's write methods each use their own transaction), so it
holds one pooled connection while the write runs on others. With every connection holding a lock
and waiting for a second one to write, the pool would deadlock, so at most half of the pool's
connections, less the two a process may hold for LISTEN (agent bus, cache sync), hold locks
(4 of the default 10). Writers of one user in one process queue on an asyncio lock first, not
on a held connection.

**The consolidation locks** (`UserLocks`). A run (or a rollback) holds the lock of every user
it works on, so two never interleave on one user. The locks live on one dedicated connection per
run: if the process dies the connection closes and the locks go with it, which is how the next
run tells an interrupted run from a running one.
"""

from __future__ import annotations

import asyncio
import hashlib
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from memory.storage.db import Database
from memory.types import Scope

_LOCK_CLASS = 0x6C6D77  # "lmw": the advisory-lock namespace of per-user memory writes
_LOCAL: weakref.WeakValueDictionary[tuple[int, str], asyncio.Lock] = weakref.WeakValueDictionary()
_SLOTS: dict[int, asyncio.Semaphore] = {}


class WriteLockTimeout(TimeoutError):
    """Another writer held the user's memory for longer than the timeout."""


def hash32(text: str) -> int:
    """A stable signed 32-bit hash, for advisory-lock keys (a collision only makes one wait)."""
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=4).digest()
    return int.from_bytes(digest, "big", signed=True)


def write_lock_key(scope: Scope) -> int:
    """The user's write-lock key (within the write-lock class)."""
    return hash32(scope.key)


def _local_lock(pool: Database, scope: Scope) -> asyncio.Lock:
    # Writers of one user in this process queue here, not on a held database connection.
    key = (id(pool), scope.key)
    lock = _LOCAL.get(key)
    if lock is None:
        lock = asyncio.Lock()
        _LOCAL[key] = lock
    return lock


def _slots(pool: Database) -> asyncio.Semaphore:
    if id(pool) not in _SLOTS:
        _SLOTS[id(pool)] = asyncio.Semaphore(max(1, (int(pool.get_max_size()) - 2) // 2))
    return _SLOTS[id(pool)]


async def _wait(awaitable: Any, timeout_s: float, what: str) -> None:
    try:
        await asyncio.wait_for(awaitable, timeout_s)
    except TimeoutError as exc:
        raise WriteLockTimeout(f"{what} stayed locked for more than {timeout_s}s") from exc


@asynccontextmanager
async def _advisory_lock(pool: Database, scope: Scope, timeout_s: float) -> AsyncIterator[None]:
    async with pool.acquire() as conn:
        # On a timeout the pool's reset on release runs pg_advisory_unlock_all(): nothing leaks.
        sql = "SELECT pg_advisory_lock($1, $2)"
        await _wait(conn.execute(sql, _LOCK_CLASS, write_lock_key(scope)), timeout_s, scope.key)
        try:
            yield
        finally:
            await conn.execute(
                "SELECT pg_advisory_unlock($1, $2)", _LOCK_CLASS, write_lock_key(scope)
            )


@asynccontextmanager
async def user_write_lock(
    pool: Database, scope: Scope, *, timeout_s: float = 30.0
) -> AsyncIterator[None]:
    """Hold the user's write lock, across processes, for the body of the block.

    `pool` is the store's connection pool (`MemoryStore.pool`): the lock's connection comes
    from the same budget as the writes it guards.
    """
    lock = _local_lock(pool, scope)  # a strong reference for the block's duration
    slots = _slots(pool)
    await _wait(lock.acquire(), timeout_s, scope.key)
    try:
        await _wait(slots.acquire(), timeout_s, "the write-lock connection budget")
        try:
            async with _advisory_lock(pool, scope, timeout_s):
                yield
        finally:
            slots.release()
    finally:
        lock.release()


# The lock key space is 64-bit; a hash of the scope keeps users apart (collision odds for a
# million users ~3·10⁻⁸) and a prefix keeps them apart from other advisory locks.
_LOCK_PREFIX = b"lma-consolidate:"


class RunBusy(RuntimeError):
    """Another consolidation run (or rollback) holds this user's lock."""


def run_lock_key(scope: Scope) -> int:
    """The signed 64-bit advisory lock key of one user for consolidation runs."""
    digest = hashlib.sha256(_LOCK_PREFIX + scope.key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class UserLocks:
    """One dedicated connection holding the per-user locks of one run."""

    def __init__(self, pool: Database) -> None:
        self._pool = pool
        self._conn: Any = None
        self.held: set[Scope] = set()

    async def try_lock(self, scope: Scope) -> bool:
        """Take the user's lock if free; False when another run holds it."""
        if scope in self.held:
            return True
        if self._conn is None:
            self._conn = await self._pool.acquire()
        got = bool(
            await self._conn.fetchval("SELECT pg_try_advisory_lock($1)", run_lock_key(scope))
        )
        if got:
            self.held.add(scope)
        return got

    async def unlock(self, scope: Scope) -> None:
        """Release one user's lock."""
        if scope in self.held and self._conn is not None:
            await self._conn.execute("SELECT pg_advisory_unlock($1)", run_lock_key(scope))
            self.held.discard(scope)

    async def close(self) -> None:
        """Release every lock and give the connection back."""
        if self._conn is None:
            return
        try:
            await self._conn.execute("SELECT pg_advisory_unlock_all()")
        finally:
            self.held.clear()
            conn, self._conn = self._conn, None
            await self._pool.release(conn)


__all__ = [
    "RunBusy",
    "UserLocks",
    "WriteLockTimeout",
    "hash32",
    "run_lock_key",
    "user_write_lock",
    "write_lock_key",
]
