"""Per-user consolidation locks: Postgres session advisory locks on one dedicated connection.

A run (or a rollback) holds the lock of every user it works on, so two never interleave on one
user. The locks live on one connection per run: if the process dies the connection closes and
the locks go with it, which is how the next run tells an interrupted run from a running one.
"""

from __future__ import annotations

import hashlib
from typing import Any

from memory.types import Scope

# The lock key space is 64-bit; a hash of the scope keeps users apart (collision odds for a
# million users ~3·10⁻⁸) and a prefix keeps them apart from other advisory locks.
_LOCK_PREFIX = b"lma-consolidate:"


class RunBusy(RuntimeError):
    """Another consolidation run (or rollback) holds this user's lock."""


def lock_key(scope: Scope) -> int:
    """The signed 64-bit advisory lock key of one user."""
    digest = hashlib.sha256(_LOCK_PREFIX + scope.key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class UserLocks:
    """One dedicated connection holding the per-user locks of one run."""

    def __init__(self, pool: Any) -> None:
        self._pool = pool
        self._conn: Any = None
        self.held: set[Scope] = set()

    async def try_lock(self, scope: Scope) -> bool:
        """Take the user's lock if free; False when another run holds it."""
        if scope in self.held:
            return True
        if self._conn is None:
            self._conn = await self._pool.acquire()
        got = bool(await self._conn.fetchval("SELECT pg_try_advisory_lock($1)", lock_key(scope)))
        if got:
            self.held.add(scope)
        return got

    async def unlock(self, scope: Scope) -> None:
        """Release one user's lock."""
        if scope in self.held and self._conn is not None:
            await self._conn.execute("SELECT pg_advisory_unlock($1)", lock_key(scope))
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
