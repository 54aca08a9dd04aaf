"""Deletions owed but not done yet: an outbox in Postgres, retried until they succeed.

A deletion removes the rows from Postgres in one transaction and, in that same transaction,
records what else must go: the memory's Chroma entries (`chroma_ids`, one memory id each;
`chroma_scope`, every entry of a forgotten user) and the threads a LangGraph server keeps in its
own registry (`server_thread`, `server_owner`), which only that server can delete. The caller
then tries the Chroma part at once and clears the rows it completed; whatever failed (Chroma
down) stays and is retried when the store opens, by `reindex`, before the next deletion and
after the next successful index write. A deletion is therefore never reported as done while a
copy is still out there: the receipt names what is pending.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

from memory.settings import Settings
from memory.storage.db import Connection, Database
from memory.storage.vector import VectorIndex, VectorIndexError
from memory.storage.vector_log import purge_log
from memory.types import Scope

if TYPE_CHECKING:
    from memory.storage.compaction import Compaction

log = logging.getLogger(__name__)

Target = Literal["chroma_ids", "chroma_scope", "server_thread"]
CHROMA_TARGETS = ("chroma_ids", "chroma_scope")
SERVER_TARGETS = ("server_thread",)


def owner_digest(scope: Scope) -> str:
    """How rows that need no owner to do their work name it: not the user id itself.

    A server thread is deleted by its id alone, so a forgotten user's id need not wait in the
    outbox until a server comes by; the digest still lets a receipt find what it owes.
    """
    return hashlib.sha256(f"{scope.tenant_id}\x00{scope.user_id}".encode()).hexdigest()


async def enqueue(conn: Connection, target: Target, items: Iterable[str], scope: Scope) -> None:
    """Record deletions owed for `scope` (inside the caller's transaction)."""
    tenant, user = (
        ("", owner_digest(scope)) if target in SERVER_TARGETS else (scope.tenant_id, scope.user_id)
    )
    rows = [(target, item, tenant, user) for item in items]
    if rows:
        await conn.executemany(
            "INSERT INTO deletion_outbox (target, item, owner_tenant, owner_user)"
            " VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
            rows,
        )


async def pending_targets(pool: Database, scope: Scope) -> list[str]:
    """The kinds of deletion still owed for `scope` (for receipts)."""
    async with pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT DISTINCT target FROM deletion_outbox WHERE (owner_tenant = $1"
            " AND owner_user = $2) OR (owner_tenant = '' AND owner_user = $3) ORDER BY target",
            scope.tenant_id,
            scope.user_id,
            owner_digest(scope),
        )
    return [r["target"] for r in rows]


async def owed(pool: Database, target: Target, item: str, scope: Scope) -> bool:
    """True while one recorded deletion is still owed."""
    async with pool.acquire() as conn:
        found = await conn.fetchval(
            "SELECT EXISTS (SELECT 1 FROM deletion_outbox WHERE target = $1 AND item = $2"
            " AND owner_tenant = $3 AND owner_user = $4)",
            target,
            item,
            scope.tenant_id,
            scope.user_id,
        )
    return bool(found)


async def has_chroma_work(pool: Database) -> bool:
    """True when some Chroma deletion is still owed (one indexed lookup)."""
    async with pool.acquire() as conn:
        found = await conn.fetchval(
            "SELECT EXISTS (SELECT 1 FROM deletion_outbox WHERE target = ANY($1::text[]))",
            list(CHROMA_TARGETS),
        )
    return bool(found)


async def _done(pool: Database, ids: list[int]) -> None:
    async with pool.acquire() as conn:
        await conn.execute("DELETE FROM deletion_outbox WHERE id = ANY($1::bigint[])", ids)


async def _failed(pool: Database, ids: list[int], error: str) -> None:
    async with pool.acquire() as conn:
        await conn.execute(
            "UPDATE deletion_outbox SET attempts = attempts + 1, last_error = $2"
            " WHERE id = ANY($1::bigint[])",
            ids,
            error[:500],
        )


async def retry_chroma(
    pool: Database,
    index: VectorIndex,
    settings: Settings,
    *,
    scope: Scope | None = None,
    compaction: Compaction | None = None,
) -> int:
    """Do the Chroma deletions owed (all, or one user's); how many were completed.

    Stops at the first failure (Chroma is still down) and leaves the rest for the next try.
    The deleted ids' log entries are blanked at once; with a `compaction` the file's VACUUM
    is left to it (coalesced), without one it runs here.
    """
    where = "target = ANY($1::text[])"
    args: list[Any] = [list(CHROMA_TARGETS)]
    if scope is not None:
        where += " AND owner_tenant = $2 AND owner_user = $3"
        args += [scope.tenant_id, scope.user_id]
    async with pool.acquire() as conn:
        rows = await conn.fetch(
            f"SELECT id, target, item, owner_tenant, owner_user FROM deletion_outbox"
            f" WHERE {where} ORDER BY id LIMIT 5000",
            *args,
        )
    groups: dict[tuple[Scope, str], list[Any]] = {}
    for row in rows:
        key = (Scope(row["owner_tenant"], row["owner_user"]), row["target"])
        groups.setdefault(key, []).append(row)
    done = 0
    for (owner, target), group in groups.items():
        row_ids = [r["id"] for r in group]
        try:
            if target == "chroma_scope":
                await index.delete_scope(owner)
            else:
                await index.delete(owner, [r["item"] for r in group])
        except VectorIndexError as exc:
            await _failed(pool, row_ids, str(exc))
            log.warning("Chroma still unavailable; %d deletions stay queued", len(rows) - done)
            return done
        if target == "chroma_ids":
            await purge_log(settings, [r["item"] for r in group], compact=compaction is None)
            if compaction is not None:
                await compaction.request(chroma=True)
        await _done(pool, row_ids)
        done += len(group)
    return done


async def server_work(pool: Database) -> list[dict[str, Any]]:
    """The server-registry deletions owed, oldest first (for the server's sweeper)."""
    async with pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT id, target, item, owner_tenant, owner_user FROM deletion_outbox"
            " WHERE target = ANY($1::text[]) ORDER BY id LIMIT 1000",
            list(SERVER_TARGETS),
        )
    return [dict(r) for r in rows]


async def clear(pool: Database, ids: list[int]) -> None:
    """Mark outbox rows completed (removes them)."""
    if ids:
        await _done(pool, ids)


__all__ = [
    "CHROMA_TARGETS",
    "SERVER_TARGETS",
    "Target",
    "clear",
    "enqueue",
    "has_chroma_work",
    "owed",
    "owner_digest",
    "pending_targets",
    "retry_chroma",
    "server_work",
]
