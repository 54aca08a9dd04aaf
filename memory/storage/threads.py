"""Which conversation threads belong to which user (`user_threads`), written once, not per turn.

Deleting a user deletes their threads' checkpoints, so every thread a user talks in is recorded.
Recording it on every turn cost a pool checkout and a round trip to Postgres each turn, to
write what was already there. This process remembers the threads it recorded lately and
records a thread again only when it has not done so for `REFRESH_S` (which keeps `last_seen`,
shown in a user's export, within that of the truth) or when the user's data changed.

Coherence: the memory of a user's threads is dropped when the user is deleted, in this process
(the store's caches are told of every change it makes, a forget included) or in another (the
deletion notification every process hears; all of it when notifications may have been lost).
So after a user is forgotten anywhere, the next turn in any of their threads records the thread
again, and a later forget finds it.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from memory.storage.cache_sync import Change
from memory.storage.db import Connection, Database
from memory.types import MemoryRecord, Scope

REFRESH_S = 300.0
MAX_REMEMBERED = 20_000  # ~100 bytes each: a couple of MB at most

# Run by the checkpointer (psycopg, `%s` parameters) when a thread is deleted: every user's
# record of it goes with it. The table exists once the store's migrations ran.
RECORDS_PRESENT_SQL = "SELECT to_regclass('user_threads') IS NOT NULL AS present"
UNRECORD_THREAD_SQL = "DELETE FROM user_threads WHERE thread_id = %s"


class ThreadRegistry:
    """Records a user's threads in `user_threads`, skipping those recorded moments ago."""

    def __init__(self, pool: Database) -> None:
        """Nothing remembered yet."""
        self.pool = pool
        self._recorded: OrderedDict[tuple[str, str, str], float] = OrderedDict()
        self.writes = 0  # statements sent, for the benchmarks
        self.skipped = 0  # turns that needed none

    async def touch(self, scope: Scope, thread_id: str) -> None:
        """Record that `thread_id` belongs to `scope` (for deleting it with the user)."""
        key = (scope.tenant_id, scope.user_id, thread_id)
        at = self._recorded.get(key)
        if at is not None and time.monotonic() - at < REFRESH_S:
            self._recorded.move_to_end(key)
            self.skipped += 1
            return
        async with self.pool.acquire() as conn:
            await conn.execute(
                "INSERT INTO user_threads (tenant_id, user_id, thread_id) VALUES ($1, $2, $3)"
                " ON CONFLICT (tenant_id, user_id, thread_id) DO UPDATE SET last_seen = now()",
                scope.tenant_id,
                scope.user_id,
                thread_id,
            )
        self.writes += 1
        # Only after the row is written: a failed write is tried again on the next turn.
        self._recorded[key] = time.monotonic()
        self._recorded.move_to_end(key)
        while len(self._recorded) > MAX_REMEMBERED:
            self._recorded.popitem(last=False)

    def remembers(self, scope: Scope) -> bool:
        """Whether a thread of `scope` is remembered as recorded (its next turn writes none)."""
        return any(k[0] == scope.tenant_id and k[1] == scope.user_id for k in self._recorded)

    def on_change(self, change: Change) -> None:
        """A change notification from any process: a deleted user's threads are recorded again.

        Other changes (a memory written, a profile updated) leave the threads as they are.
        """
        if change.version is None and not change.settings_only:
            self.invalidate(change.scope)

    def on_lost(self, scope: Scope | None) -> None:
        """Notifications may have been lost (None): a deletion may be among them."""
        if scope is None:
            self.clear()

    # The store's cache protocol: told of every change this process makes.

    def written(
        self,
        scope: Scope,
        records: Sequence[MemoryRecord],
        vectors: Any,
        version: int,
        own: Any = None,
    ) -> None:
        """A write: the user's threads are still theirs."""

    def invalidate(self, scope: Scope) -> None:
        """The user's data changed (a forget among others): record their threads again."""
        for key in [k for k in self._recorded if k[0] == scope.tenant_id and k[1] == scope.user_id]:
            del self._recorded[key]

    def clear(self) -> None:
        """Record every thread again."""
        self._recorded.clear()


async def others_threads(conn: Connection, scope: Scope, thread_ids: Sequence[str]) -> set[str]:
    """Of `thread_ids`, those whose checkpoints the server stamped with another owner.

    A thread id is the client's choice: once its owner deleted a thread, another user may
    create one with the same id. A `user_threads` row the first owner left (or any other list
    of their threads) must not let their forget, or a memory's deletion, reach the new
    owner's checkpoints. Checkpoints with no owner stamp (graphs run without the server) are
    nobody else's.
    """
    if not thread_ids or await conn.fetchval("SELECT to_regclass('checkpoints')") is None:
        return set()
    rows = await conn.fetch(
        "SELECT DISTINCT thread_id FROM checkpoints WHERE thread_id = ANY($3::text[])"
        " AND metadata->>'owner' IS NOT NULL"
        " AND (metadata->>'owner' <> $2 OR metadata->>'tenant_id' IS DISTINCT FROM $1)",
        scope.tenant_id,
        scope.user_id,
        list(thread_ids),
    )
    return {r["thread_id"] for r in rows}


__all__ = [
    "MAX_REMEMBERED",
    "RECORDS_PRESENT_SQL",
    "REFRESH_S",
    "UNRECORD_THREAD_SQL",
    "ThreadRegistry",
    "others_threads",
]
