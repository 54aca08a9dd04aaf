"""Shared memory between the agents of one tenant (seed 000 §5): publish / subscribe on Postgres.

No extra server: `agent_events` is the durable log and LISTEN/NOTIFY the doorbell. `publish`
inserts the event and sends NOTIFY with only its id (payloads are capped at 8,000 bytes) in one
transaction, so the doorbell rings only once the row is readable. A subscriber reads rows after
its cursor, on each ring and every `poll_s` as a safety net, and saves the cursor, so an agent
that was offline catches up where it stopped. Reads filter on the subscriber's tenant: another
tenant's events are never returned, whatever arrives on the channel. Durable event types also
become memories (`bus_persist`).

Event ids come from a sequence, and a sequence hands out ids in call order, not commit order: a
subscriber that read id 7 while id 6 was still uncommitted would skip 6 forever. Publishing
therefore holds a per-tenant transaction lock, so a tenant's ids commit in order.
"""

from __future__ import annotations

import weakref
from collections.abc import Collection, Mapping
from typing import Any

from memory.gating.concurrency_lock import hash32
from memory.gating.privacy import PrivacyFilter
from memory.sharing.bus_persist import PersistPolicy, persist_event
from memory.sharing.bus_subscription import Subscription
from memory.sharing.bus_types import (
    DURABLE_TYPES,
    EVENT_COLUMNS,
    Event,
    channel_for,
    check_names,
    clean_data,
    event_from_row,
)
from memory.storage.listener import PgListener
from memory.storage.store import MemoryStore

_PUBLISH_LOCK = 0x6C6D65  # "lme": advisory-lock namespace of per-tenant publishing
_BATCH = 100


class AgentBus:
    """Publish and subscribe to a tenant's agent events over the store's Postgres."""

    def __init__(
        self,
        store: MemoryStore,
        *,
        persist: PersistPolicy | None = None,
        durable_types: Collection[str] = DURABLE_TYPES,
    ) -> None:
        self.store = store
        self.listener = PgListener(store.pool)
        self._persist = persist or PersistPolicy()
        self._privacy = self._persist.privacy or PrivacyFilter()
        self._durable = frozenset(durable_types)
        self._subscriptions: weakref.WeakSet[Subscription] = weakref.WeakSet()

    async def close(self) -> None:
        """End open subscriptions (without acknowledging their last event) and stop listening."""
        for sub in list(self._subscriptions):
            await sub.close(ack=False)
        await self.listener.close()

    async def publish(
        self,
        tenant_id: str,
        agent_id: str,
        event_type: str,
        data: Mapping[str, Any],
        *,
        user_id: str | None = None,
    ) -> Event:
        """Publish an event to the tenant's agents; durable types are also stored as memories.

        `user_id` names the user the event is about: a durable event becomes that user's memory
        (subject to their consent); without it, a memory of the tenant's agents (`SHARED_USER`).
        """
        check_names(tenant_id, agent_id, event_type, user_id)
        _, text = clean_data(data, self._privacy)
        memory_id = None
        if event_type in self._durable:
            memory_id = await persist_event(
                self.store, tenant_id, agent_id, event_type, data, user_id, self._persist
            )
        async with self.store.pool.acquire() as conn, conn.transaction():
            await conn.execute(
                "SELECT pg_advisory_xact_lock($1, $2)",
                _PUBLISH_LOCK,
                hash32(tenant_id),
            )
            row = await conn.fetchrow(
                "INSERT INTO agent_events (tenant_id, agent_id, event_type, user_id, data,"
                " memory_id) VALUES ($1, $2, $3, $4, $5::jsonb, $6) RETURNING " + EVENT_COLUMNS,
                tenant_id,
                agent_id,
                event_type,
                user_id,
                text,
                memory_id,
            )
            assert row is not None  # INSERT ... RETURNING yields the row
            await conn.execute("SELECT pg_notify($1, $2)", channel_for(tenant_id), str(row["id"]))
        return event_from_row(row)

    def subscribe(
        self,
        tenant_id: str,
        agent_id: str,
        event_types: Collection[str] | None = None,
        *,
        since: int | None = None,
        poll_s: float = 30.0,
    ) -> Subscription:
        """Other agents' events of this tenant, oldest first, as an async iterator.

        Starts after the agent's saved cursor (or `since`; a new agent starts at the newest
        event). Use `async with bus.subscribe(...) as events: async for e in events: ...`, or
        `await sub.start()` before publishing to be sure nothing published later is missed.
        """
        check_names(tenant_id, agent_id, "subscribe", None)
        sub = Subscription(self, tenant_id, agent_id, event_types, since=since, poll_s=poll_s)
        self._subscriptions.add(sub)
        return sub

    async def scan(self, tenant_id: str, after: int, *, limit: int = _BATCH) -> list[Event]:
        """Every event of this tenant after id `after` (all agents, all types), oldest first."""
        async with self.store.pool.acquire() as conn:
            rows = await conn.fetch(
                f"SELECT {EVENT_COLUMNS} FROM agent_events WHERE tenant_id = $1 AND id > $2"
                " ORDER BY id LIMIT $3",
                tenant_id,
                after,
                limit,
            )
        return [event_from_row(r) for r in rows]

    async def read_after(
        self,
        tenant_id: str,
        agent_id: str,
        after: int,
        event_types: Collection[str] | None = None,
        *,
        limit: int = _BATCH,
    ) -> list[Event]:
        """Events of this tenant after id `after`, from agents other than `agent_id`."""
        async with self.store.pool.acquire() as conn:
            rows = await conn.fetch(
                f"SELECT {EVENT_COLUMNS} FROM agent_events WHERE tenant_id = $1 AND id > $2"
                " AND agent_id <> $3 AND ($4::text[] IS NULL OR event_type = ANY($4::text[]))"
                " ORDER BY id LIMIT $5",
                tenant_id,
                after,
                agent_id,
                None if event_types is None else list(event_types),
                limit,
            )
        return [event_from_row(r) for r in rows]

    async def save_cursor(self, tenant_id: str, agent_id: str, last_id: int) -> None:
        """Record that `agent_id` has handled this tenant's events up to `last_id`."""
        async with self.store.pool.acquire() as conn:
            await conn.execute(
                "INSERT INTO agent_cursors (tenant_id, agent_id, last_id) VALUES ($1, $2, $3)"
                " ON CONFLICT (tenant_id, agent_id) DO UPDATE"
                " SET last_id = GREATEST(agent_cursors.last_id, $3), updated_at = now()",
                tenant_id,
                agent_id,
                last_id,
            )

    async def newest_id(self, tenant_id: str) -> int:
        """The id of this tenant's newest event (0 when none)."""
        async with self.store.pool.acquire() as conn:
            value = await conn.fetchval(
                "SELECT coalesce(max(id), 0) FROM agent_events WHERE tenant_id = $1", tenant_id
            )
        return int(value)

    async def cursor(self, tenant_id: str, agent_id: str) -> int | None:
        """The agent's saved cursor, or None when it never subscribed."""
        async with self.store.pool.acquire() as conn:
            value = await conn.fetchval(
                "SELECT last_id FROM agent_cursors WHERE tenant_id = $1 AND agent_id = $2",
                tenant_id,
                agent_id,
            )
        return None if value is None else int(value)


__all__ = ["AgentBus", "Event", "Subscription"]
