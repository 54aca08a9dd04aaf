"""Shared memory between the agents of one tenant, over Postgres.

A durable event log with LISTEN/NOTIFY delivery (`bus`, `bus_subscription`), whose durable
event types also become memories (`bus_persist`).

Names are loaded on first use: the bus needs the storage layer (asyncpg), which a caller of
`memory.sharing.bus_types` alone does not.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memory.sharing.bus import AgentBus
    from memory.sharing.bus_persist import PersistPolicy
    from memory.sharing.bus_subscription import Subscription
    from memory.sharing.bus_types import DURABLE_TYPES, SHARED_USER, BusInputError, Event

_EXPORTS = {
    "AgentBus": "memory.sharing.bus",
    "PersistPolicy": "memory.sharing.bus_persist",
    "Subscription": "memory.sharing.bus_subscription",
    "BusInputError": "memory.sharing.bus_types",
    "DURABLE_TYPES": "memory.sharing.bus_types",
    "Event": "memory.sharing.bus_types",
    "SHARED_USER": "memory.sharing.bus_types",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "DURABLE_TYPES",
    "SHARED_USER",
    "AgentBus",
    "BusInputError",
    "Event",
    "PersistPolicy",
    "Subscription",
]
