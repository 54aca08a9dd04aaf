"""The `consolidation_runs` ledger (one row per run and user) and the listing of users to run.

A row is 'running' from the start of a user's run until it completes or is rolled back. Runs
hold the user's advisory lock (`user_locks`) meanwhile, so a row still 'running' whose user
lock is free belongs to a run that was interrupted: the next run for that user rolls it back
before it starts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from memory.storage.db import Connection, Database, Row
from memory.types import Scope


async def start_run(pool: Database, run_id: str, scope: Scope) -> None:
    """Record that a run started for one user (its changes will point to this row)."""
    async with pool.acquire() as conn:
        await conn.execute(
            "INSERT INTO consolidation_runs (run_id, tenant_id, user_id, status)"
            " VALUES ($1, $2, $3, 'running')",
            run_id, scope.tenant_id, scope.user_id,
        )  # fmt: skip


async def finish_run(
    pool: Database,
    run_id: str,
    scope: Scope,
    *,
    status: str,
    counts: Mapping[str, int],
    decisions: Sequence[Mapping[str, Any]],
    error: str = "",
) -> None:
    """Close a user's run row with its counts and decisions."""
    async with pool.acquire() as conn:
        await conn.execute(
            "UPDATE consolidation_runs SET status = $4, finished_at = now(), counts = $5::jsonb,"
            " decisions = $6::jsonb, error = $7"
            " WHERE run_id = $1 AND tenant_id = $2 AND user_id = $3",
            run_id, scope.tenant_id, scope.user_id, status,
            json.dumps(dict(counts)), json.dumps(list(decisions), default=str), error,
        )  # fmt: skip


async def stale_runs(pool: Database, scope: Scope, current: str) -> list[str]:
    """Runs still marked 'running' for a user whose lock the caller holds: interrupted ones."""
    async with pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT run_id FROM consolidation_runs WHERE tenant_id = $1 AND user_id = $2"
            " AND status = 'running' AND run_id <> $3 ORDER BY started_at DESC",
            scope.tenant_id, scope.user_id, current,
        )  # fmt: skip
    return [r["run_id"] for r in rows]


async def run_rows(pool: Database, run_id: str) -> list[dict[str, Any]]:
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
    pool: Database, *, tenant: str | None, after: Sequence[str] | None, limit: int
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


async def count_scopes(pool: Database, *, tenant: str | None) -> int:
    """How many users have memories (for a progress bar)."""
    async with pool.acquire() as conn:
        return int(
            await conn.fetchval(
                "SELECT count(*) FROM (SELECT DISTINCT tenant_id, user_id FROM memories"
                " WHERE $1::text IS NULL OR tenant_id = $1) s",
                tenant,
            )
        )


async def mark_rolled_back(conn: Connection, run_id: str, scope: Scope, reason: str) -> None:
    """Mark one user's run as rolled back (inside the rollback's transaction)."""
    await conn.execute(
        "UPDATE consolidation_runs SET status = 'rolled_back', rolled_back_at = now(),"
        " rollback_reason = $4 WHERE run_id = $1 AND tenant_id = $2 AND user_id = $3",
        run_id, scope.tenant_id, scope.user_id, reason,
    )  # fmt: skip


async def tenant_runs(pool: Database, tenant: str, *, limit: int) -> list[Row]:
    """The tenant's latest runs, newest first, one row per run.

    Each row aggregates the run's users: `statuses` is an array, `counts` a JSON array of the
    per-user counts.
    """
    async with pool.acquire() as conn:
        return list(
            await conn.fetch(
                "SELECT run_id, min(started_at) AS started_at, max(finished_at) AS finished_at,"
                " count(*) AS users, array_agg(DISTINCT status) AS statuses,"
                " jsonb_agg(counts) AS counts"
                " FROM consolidation_runs WHERE tenant_id = $1"
                " GROUP BY run_id ORDER BY min(started_at) DESC LIMIT $2",
                tenant,
                limit,
            )
        )


async def run_user_rows(pool: Database, run_id: str, tenant: str) -> list[Row]:
    """A run's per-user rows within one tenant, by user (status, counts, rollback)."""
    async with pool.acquire() as conn:
        return list(
            await conn.fetch(
                "SELECT run_id, tenant_id, user_id, status, started_at, finished_at, counts,"
                " error, rolled_back_at, rollback_reason FROM consolidation_runs"
                " WHERE run_id = $1 AND tenant_id = $2 ORDER BY user_id",
                run_id,
                tenant,
            )
        )
