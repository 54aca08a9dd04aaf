"""The keys a LangGraph `BaseStore` caller chose for its items (table `memory_store_keys`).

LangMem, Studio and the `/store` API address an item by a key of their own; a memory has our id.
A key names one memory of one user, re-binding a key points it at the newer memory, and
deleting the memory drops its keys (foreign key, `ON DELETE CASCADE`).
"""

from __future__ import annotations

from memory.storage.db import Database
from memory.types import Scope


async def memory_id_for(pool: Database, scope: Scope, key: str) -> str | None:
    """The memory `key` is bound to for this user, if any."""
    async with pool.acquire() as conn:
        value = await conn.fetchval(
            "SELECT memory_id FROM memory_store_keys"
            " WHERE tenant_id = $1 AND user_id = $2 AND key = $3",
            scope.tenant_id,
            scope.user_id,
            key,
        )
    return None if value is None else str(value)


async def keys_for(pool: Database, scope: Scope, memory_ids: list[str]) -> dict[str, str]:
    """Each memory's most recently bound key (memories without a key are left out)."""
    if not memory_ids:
        return {}
    async with pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT DISTINCT ON (memory_id) memory_id, key FROM memory_store_keys"
            " WHERE tenant_id = $1 AND user_id = $2 AND memory_id = ANY($3::text[])"
            " ORDER BY memory_id, updated_at DESC",
            scope.tenant_id,
            scope.user_id,
            memory_ids,
        )
    return {r["memory_id"]: r["key"] for r in rows}


async def bind_key(pool: Database, scope: Scope, key: str, memory_id: str) -> None:
    """Point `key` at `memory_id` for this user (replacing an earlier binding)."""
    async with pool.acquire() as conn:
        await conn.execute(
            "INSERT INTO memory_store_keys (tenant_id, user_id, key, memory_id)"
            " VALUES ($1, $2, $3, $4) ON CONFLICT (tenant_id, user_id, key)"
            " DO UPDATE SET memory_id = $4, updated_at = now()",
            scope.tenant_id,
            scope.user_id,
            key,
            memory_id,
        )


__all__ = ["bind_key", "keys_for", "memory_id_for"]
