"""Shared memory between the agents of one tenant: publish / subscribe on Postgres.

No extra server: `agent_events` is the durable log and LISTEN/NOTIFY the doorbell
(`memory.storage.agent_events` writes the row and rings in one transaction, in per-tenant id
order). A subscriber reads rows after its cursor, on each ring and every `poll_s` as a safety
net, and saves the cursor, so an agent that was offline catches up where it stopped. Reads filter
on the subscriber's tenant: another tenant's events are never returned, whatever arrives on the
channel. Durable event types also become memories (`persist`).
"""

from __future__ import annotations

import weakref
from collections.abc import Collection, Mapping
from typing import Any

import memory.storage.agent_events as agent_events
from memory.gating.privacy import PrivacyFilter
from memory.sharing.events import (
    DURABLE_TYPES,
    Event,
    channel_for,
    check_names,
    clean_data,
    event_from_row,
)
from memory.sharing.persist import PersistPolicy, persist_event
from memory.sharing.subscription import Subscription
from memory.storage.listener import PgListener
from memory.storage.store import MemoryStore

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
        row = await agent_events.append_event(
            self.store.pool,
            channel_for(tenant_id),
            tenant_id,
            agent_id,
            event_type,
            user_id,
            text,
            memory_id,
        )
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
        rows = await agent_events.events_after(self.store.pool, tenant_id, after, limit=limit)
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
        rows = await agent_events.events_for(
            self.store.pool, tenant_id, agent_id, after, event_types, limit=limit
        )
        return [event_from_row(r) for r in rows]

    async def save_cursor(self, tenant_id: str, agent_id: str, last_id: int) -> None:
        """Record that `agent_id` has handled this tenant's events up to `last_id`."""
        await agent_events.save_cursor(self.store.pool, tenant_id, agent_id, last_id)

    async def newest_id(self, tenant_id: str) -> int:
        """The id of this tenant's newest event (0 when none)."""
        return await agent_events.newest_event_id(self.store.pool, tenant_id)

    async def cursor(self, tenant_id: str, agent_id: str) -> int | None:
        """The agent's saved cursor, or None when it never subscribed."""
        return await agent_events.load_cursor(self.store.pool, tenant_id, agent_id)


__all__ = ["AgentBus", "Event", "Subscription"]
