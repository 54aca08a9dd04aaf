"""What a user holds, counted from Postgres (the system of record), for per-user quotas.

Counted from the tables, never from a counter beside them: a counter drifts the first time a
writer forgets it (a forget, an import, a migration), and every worker reads the same rows.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory.storage.db import Connection, Database
from memory.storage.user_locks import hash32
from memory.types import Scope

# Active and pending memories count against the quota; superseded ones are history, and a
# user cannot remove them by themselves, so counting them would lock a user out for good.
_MEMORIES_SQL = """
SELECT count(*) AS n,
       coalesce(sum(octet_length(content) + octet_length(context) + octet_length(outcome)), 0)
           AS text_bytes
FROM memories
WHERE tenant_id = $1 AND user_id = $2 AND status IN ('active', 'pending_approval')
"""
_THUMBNAILS_SQL = """
SELECT coalesce(sum(octet_length(i.thumbnail)), 0)
FROM memory_images i JOIN memories m ON m.id = i.memory_id
WHERE i.tenant_id = $1 AND i.user_id = $2 AND m.status IN ('active', 'pending_approval')
"""


@dataclass(frozen=True, slots=True)
class Usage:
    """A user's kept memories and their bytes (text plus image thumbnails)."""

    memories: int
    bytes: int


async def usage(db: Database | Connection, scope: Scope) -> Usage:
    """The user's memory count and bytes, as Postgres holds them now."""
    row = await db.fetchrow(_MEMORIES_SQL, scope.tenant_id, scope.user_id)
    thumbs = await db.fetchval(_THUMBNAILS_SQL, scope.tenant_id, scope.user_id)
    count, text = (int(row["n"]), int(row["text_bytes"])) if row is not None else (0, 0)
    return Usage(count, text + int(thumbs or 0))


def over_quota(
    held: Usage, max_memories: int | None, max_bytes: int | None, adding: int = 0
) -> str | None:
    """Why one more memory of `adding` bytes does not fit, or None when it does."""
    if max_memories is not None and held.memories >= max_memories:
        return f"memory quota full: {held.memories:,} of {max_memories:,} memories kept"
    if max_bytes is not None and held.bytes + adding > max_bytes:
        return f"memory quota full: {held.bytes:,} of {max_bytes:,} bytes kept"
    return None


_THREAD_LOCK_CLASS = 0x6C7471  # "lmq": advisory-lock namespace of per-user thread claims


async def thread_claimed(db: Database | Connection, scope: Scope, thread_id: str) -> bool:
    """True when the user already holds a claim on `thread_id` (it counts already)."""
    found = await db.fetchval(
        "SELECT 1 FROM thread_creations WHERE tenant_id = $1 AND user_id = $2 AND thread_id = $3",
        scope.tenant_id,
        scope.user_id,
        thread_id,
    )
    return found is not None


async def claim_thread(
    pool: Database, scope: Scope, thread_id: str, max_threads: int | None
) -> int | None:
    """Count a new thread against the user's quota; None when it fits, else the count held.

    Under a per-user transaction lock, so two workers creating the user's last allowed thread
    at once do not both get it. A thread the user already claimed fits (it counts already);
    with no quota (`max_threads` None) the claim is still recorded, so that a run that names a
    thread "create if missing" can tell a new thread from one the user has.
    """
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute(
            "SELECT pg_advisory_xact_lock($1, $2)", _THREAD_LOCK_CLASS, hash32(scope.key)
        )
        if max_threads is not None and not await thread_claimed(conn, scope, thread_id):
            held = int(
                await conn.fetchval(
                    "SELECT count(*) FROM thread_creations WHERE tenant_id = $1 AND user_id = $2",
                    scope.tenant_id,
                    scope.user_id,
                )
                or 0
            )
            if held >= max_threads:
                return held
        await conn.execute(
            "INSERT INTO thread_creations (tenant_id, user_id, thread_id) VALUES ($1, $2, $3)"
            " ON CONFLICT DO NOTHING",
            scope.tenant_id,
            scope.user_id,
            thread_id,
        )
    return None


async def release_thread(pool: Database, scope: Scope, thread_id: str) -> None:
    """The user deleted a thread: it no longer counts (only the caller's own claim goes)."""
    await pool.execute(
        "DELETE FROM thread_creations WHERE tenant_id = $1 AND user_id = $2 AND thread_id = $3",
        scope.tenant_id,
        scope.user_id,
        thread_id,
    )


__all__ = ["Usage", "claim_thread", "over_quota", "release_thread", "thread_claimed", "usage"]
