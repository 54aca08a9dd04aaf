"""The agent bus's event record, channel naming and payload checks."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from memory.gating.privacy import PrivacyFilter
from memory.storage.listener import PgListener
from memory.types import Scope

# Outcomes worth keeping beyond the live broadcast: a finished task, something learned.
DURABLE_TYPES: frozenset[str] = frozenset({"task_completed", "knowledge_learned"})
# Memories an agent publishes without naming a user belong to the tenant's agents, stored under
# this reserved user id. Every user id under `RESERVED_PREFIX` is the system's: no token or run
# context may name one (`reserved_user`), whatever an identity provider hands out.
RESERVED_PREFIX = "agents:"
SHARED_USER = f"{RESERVED_PREFIX}shared"
MAX_DATA_BYTES = 64_000
_EVENT_TYPE = re.compile(r"[a-z][a-z0-9_.:-]{0,63}")


def reserved_user(user_id: str) -> bool:
    """Whether `user_id` is one the system keeps for itself (the tenant's shared agent memory).

    Compared without case and surrounding space, so no spelling of it passes for a person.
    """
    return user_id.strip().casefold().startswith(RESERVED_PREFIX)


class BusInputError(ValueError):
    """An event that cannot be published as given."""


@dataclass(frozen=True, slots=True)
class Event:
    """One published event, as subscribers receive it."""

    id: int
    tenant_id: str
    agent_id: str
    event_type: str
    data: dict[str, Any]
    user_id: str | None
    memory_id: str | None
    created_at: datetime


class EventSource(Protocol):
    """What a subscription reads through: the bus's listener, event log and cursors."""

    listener: PgListener

    async def scan(self, tenant_id: str, after: int) -> list[Event]:
        """Every event of this tenant after id `after`, oldest first."""
        ...

    async def save_cursor(self, tenant_id: str, agent_id: str, last_id: int) -> None:
        """Record that `agent_id` has handled this tenant's events up to `last_id`."""
        ...

    async def newest_id(self, tenant_id: str) -> int:
        """The id of this tenant's newest event (0 when none)."""
        ...

    async def cursor(self, tenant_id: str, agent_id: str) -> int | None:
        """The agent's saved cursor, or None when it never subscribed."""
        ...


def channel_for(tenant_id: str) -> str:
    """The NOTIFY channel of a tenant's events.

    A hash keeps it under PostgreSQL's 63-byte identifier limit (tenant ids may be 128 chars);
    a collision only wakes another tenant's subscribers, whose reads still filter on tenant.
    """
    return "lma_bus_" + hashlib.sha256(tenant_id.encode("utf-8")).hexdigest()[:24]


def check_names(tenant_id: str, agent_id: str, event_type: str, user_id: str | None) -> None:
    """Refuse malformed ids (the Scope rules) and event types."""
    Scope(tenant_id, agent_id)  # raises ScopeError: same characters as tenant and user ids
    if user_id is not None:
        Scope(tenant_id, user_id)
    if not _EVENT_TYPE.fullmatch(event_type):
        raise BusInputError(f"event type must be lower-case [a-z0-9_.:-], got {event_type!r}")


def _redact(value: Any, privacy: PrivacyFilter) -> Any:
    if isinstance(value, str):
        return privacy.redact(value).text
    if isinstance(value, Mapping):
        return {str(k): _redact(v, privacy) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redact(v, privacy) for v in value]
    return value


def clean_data(data: Mapping[str, Any], privacy: PrivacyFilter) -> tuple[dict[str, Any], str]:
    """The event data redacted (secrets never reach the log) and its JSON text."""
    cleaned = _redact(dict(data), privacy)
    try:
        text = json.dumps(cleaned, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise BusInputError(f"event data must be JSON: {exc}") from exc
    if len(text.encode("utf-8")) > MAX_DATA_BYTES:
        raise BusInputError(f"event data is over {MAX_DATA_BYTES:,} bytes; publish a summary")
    if "\x00" in text or "\\u0000" in text:
        raise BusInputError("event data contains NUL characters")
    return cleaned, text


def event_from_row(row: Any) -> Event:
    """Build an Event from an `agent_events` row (`memory.storage.agent_events`)."""
    data = row["data"]
    return Event(
        id=int(row["id"]),
        tenant_id=row["tenant_id"],
        agent_id=row["agent_id"],
        event_type=row["event_type"],
        data=json.loads(data) if isinstance(data, str) else dict(data),
        user_id=row["user_id"],
        memory_id=row["memory_id"],
        created_at=row["created_at"],
    )
