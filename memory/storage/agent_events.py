"""The agent bus's tables: `agent_events` (the durable event log) and `agent_cursors`.

Event ids come from a sequence, and a sequence hands out ids in call order, not commit order: a
subscriber that read id 7 while id 6 was still uncommitted would skip 6 forever. `append_event`
therefore holds a per-tenant transaction lock, so a tenant's ids commit in order, and sends the
NOTIFY (only the id: payloads are capped at 8,000 bytes) in the same transaction, so the doorbell
rings only once the row is readable. Every read filters on the tenant.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from memory.storage.db import Database, Row
from memory.storage.user_locks import hash32

_PUBLISH_LOCK = 0x6C6D65  # "lme": advisory-lock namespace of per-tenant publishing

EVENT_COLUMNS = "id, tenant_id, agent_id, event_type, user_id, data, memory_id, created_at"


async def append_event(
    pool: Database,
    channel: str,
    tenant_id: str,
    agent_id: str,
    event_type: str,
    user_id: str | None,
    data_json: str,
    memory_id: str | None,
) -> Any:
    """Insert one event and NOTIFY `channel` with its id, in one transaction; the new row."""
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1, $2)", _PUBLISH_LOCK, hash32(tenant_id))
        row = await conn.fetchrow(
            "INSERT INTO agent_events (tenant_id, agent_id, event_type, user_id, data,"
            " memory_id) VALUES ($1, $2, $3, $4, $5::jsonb, $6) RETURNING " + EVENT_COLUMNS,
            tenant_id,
            agent_id,
            event_type,
            user_id,
            data_json,
            memory_id,
        )
        assert row is not None  # INSERT ... RETURNING yields the row
        await conn.execute("SELECT pg_notify($1, $2)", channel, str(row["id"]))
    return row


async def events_after(pool: Database, tenant_id: str, after: int, *, limit: int) -> list[Row]:
    """Rows of every event of this tenant after id `after` (all agents, all types), oldest first."""
    async with pool.acquire() as conn:
        return list(
            await conn.fetch(
                f"SELECT {EVENT_COLUMNS} FROM agent_events WHERE tenant_id = $1 AND id > $2"
                " ORDER BY id LIMIT $3",
                tenant_id,
                after,
                limit,
            )
        )


async def events_for(
    pool: Database,
    tenant_id: str,
    agent_id: str,
    after: int,
    event_types: Collection[str] | None,
    *,
    limit: int,
) -> list[Row]:
    """Rows of this tenant's events after id `after` from agents other than `agent_id`.

    `event_types` keeps only those types (None: all), oldest first.
    """
    async with pool.acquire() as conn:
        return list(
            await conn.fetch(
                f"SELECT {EVENT_COLUMNS} FROM agent_events WHERE tenant_id = $1 AND id > $2"
                " AND agent_id <> $3 AND ($4::text[] IS NULL OR event_type = ANY($4::text[]))"
                " ORDER BY id LIMIT $5",
                tenant_id,
                after,
                agent_id,
                None if event_types is None else list(event_types),
                limit,
            )
        )


async def newest_event_id(pool: Database, tenant_id: str) -> int:
    """The id of this tenant's newest event (0 when none)."""
    async with pool.acquire() as conn:
        value = await conn.fetchval(
            "SELECT coalesce(max(id), 0) FROM agent_events WHERE tenant_id = $1", tenant_id
        )
    return int(value)


async def save_cursor(pool: Database, tenant_id: str, agent_id: str, last_id: int) -> None:
    """Record that `agent_id` has handled this tenant's events up to `last_id` (never back)."""
    async with pool.acquire() as conn:
        await conn.execute(
            "INSERT INTO agent_cursors (tenant_id, agent_id, last_id) VALUES ($1, $2, $3)"
            " ON CONFLICT (tenant_id, agent_id) DO UPDATE"
            " SET last_id = GREATEST(agent_cursors.last_id, $3), updated_at = now()",
            tenant_id,
            agent_id,
            last_id,
        )


async def load_cursor(pool: Database, tenant_id: str, agent_id: str) -> int | None:
    """The agent's saved cursor, or None when it never subscribed."""
    async with pool.acquire() as conn:
        value = await conn.fetchval(
            "SELECT last_id FROM agent_cursors WHERE tenant_id = $1 AND agent_id = $2",
            tenant_id,
            agent_id,
        )
    return None if value is None else int(value)


__all__ = [
    "EVENT_COLUMNS",
    "append_event",
    "events_after",
    "events_for",
    "load_cursor",
    "newest_event_id",
    "save_cursor",
]
