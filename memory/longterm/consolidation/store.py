"""Consolidation's SQL: per-user advisory locks, the `consolidation_runs` ledger, user listing.

Locks are Postgres session advisory locks held on one dedicated connection per run. If the
process dies the connection closes and the locks go with it, so a row still marked 'running'
whose user lock is free is a run that was interrupted: the next run for that user rolls it back
before it starts (`consolidation_session`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from memory.longterm.consolidation.types import UserRun
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


async def start_run(pool: Any, run: UserRun) -> None:
    """Record that a run started for one user (its changes will point to this row)."""
    async with pool.acquire() as conn:
        await conn.execute(
            "INSERT INTO consolidation_runs (run_id, tenant_id, user_id, status)"
            " VALUES ($1, $2, $3, 'running')",
            run.run_id, run.scope.tenant_id, run.scope.user_id,
        )  # fmt: skip


async def finish_run(
    pool: Any, run: UserRun, *, status: str, error: str = "", keep: int = 1000
) -> None:
    """Close a user's run row with its counts and (up to `keep`) decisions."""
    decisions = [d.as_dict() for d in run.decisions[:keep]]
    async with pool.acquire() as conn:
        await conn.execute(
            "UPDATE consolidation_runs SET status = $4, finished_at = now(), counts = $5::jsonb,"
            " decisions = $6::jsonb, error = $7"
            " WHERE run_id = $1 AND tenant_id = $2 AND user_id = $3",
            run.run_id, run.scope.tenant_id, run.scope.user_id, status,
            json.dumps(run.counts), json.dumps(decisions, default=str), error,
        )  # fmt: skip


async def stale_runs(pool: Any, scope: Scope, current: str) -> list[str]:
    """Runs still marked 'running' for a user whose lock the caller holds: interrupted ones."""
    async with pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT run_id FROM consolidation_runs WHERE tenant_id = $1 AND user_id = $2"
            " AND status = 'running' AND run_id <> $3 ORDER BY started_at DESC",
            scope.tenant_id, scope.user_id, current,
        )  # fmt: skip
    return [r["run_id"] for r in rows]


async def run_rows(pool: Any, run_id: str) -> list[dict[str, Any]]:
    """Every user row of a run (status, counts, decisions ...)."""
    async with pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT run_id, tenant_id, user_id, status, started_at, finished_at, counts,"
            " decisions, error, rolled_back_at, rollback_reason FROM consolidation_runs"
            " WHERE run_id = $1 ORDER BY tenant_id, user_id",
            run_id,
        )
    out = []
    for row in rows:
        item = dict(row)
        for key in ("counts", "decisions"):
            if isinstance(item[key], str):
                item[key] = json.loads(item[key])
        out.append(item)
    return out


async def list_scopes(
    pool: Any, *, tenant: str | None, after: Sequence[str] | None, limit: int
) -> list[Scope]:
    """Users with memories, in (tenant, user) order, after a keyset cursor (admin listing)."""
    after_t, after_u = (after[0], after[1]) if after else ("", "")
    async with pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT DISTINCT tenant_id, user_id FROM memories"
            " WHERE ($1::text IS NULL OR tenant_id = $1) AND (tenant_id, user_id) > ($2, $3)"
            " ORDER BY tenant_id, user_id LIMIT $4",
            tenant, after_t, after_u, limit,
        )  # fmt: skip
    return [Scope(r["tenant_id"], r["user_id"]) for r in rows]


async def count_scopes(pool: Any, *, tenant: str | None) -> int:
    """How many users have memories (for a progress bar)."""
    async with pool.acquire() as conn:
        return int(
            await conn.fetchval(
                "SELECT count(*) FROM (SELECT DISTINCT tenant_id, user_id FROM memories"
                " WHERE $1::text IS NULL OR tenant_id = $1) s",
                tenant,
            )
        )
