"""Shared memory between the agents of one tenant, over Postgres.

A durable event log with LISTEN/NOTIFY delivery (`bus`, `subscription`, `events`), whose durable
event types also become memories (`persist`).

Names are loaded on first use: the bus needs the storage layer (asyncpg), which a caller of
`memory.sharing.events` alone does not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.exports import lazy_exports

if TYPE_CHECKING:
    from memory.sharing.bus import AgentBus
    from memory.sharing.events import DURABLE_TYPES, SHARED_USER, BusInputError, Event
    from memory.sharing.persist import PersistPolicy
    from memory.sharing.subscription import Subscription

_EXPORTS = {
    "AgentBus": "memory.sharing.bus",
    "BusInputError": "memory.sharing.events",
    "DURABLE_TYPES": "memory.sharing.events",
    "Event": "memory.sharing.events",
    "SHARED_USER": "memory.sharing.events",
    "PersistPolicy": "memory.sharing.persist",
    "Subscription": "memory.sharing.subscription",
}


__getattr__ = lazy_exports(__name__, _EXPORTS)


__all__ = [
    "DURABLE_TYPES",
    "SHARED_USER",
    "AgentBus",
    "BusInputError",
    "Event",
    "PersistPolicy",
    "Subscription",
]
