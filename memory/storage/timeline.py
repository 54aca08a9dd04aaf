"""When a fact was true: validity windows, the chain of values an update left, and restoring one.

An update ("I moved to Munich last month" after "I live in Berlin") keeps the old memory as
`superseded`, linked to its successor by `superseded_by`, and closes its window: the old
memory's `valid_to` is the new one's `valid_from`. Nothing is deleted, so the system of record
can still answer "where did I live before Munich?". This module reads those chains (for recall,
`memory-agent why` and the inspector) and undoes an update the user says was wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memory.storage.rows import LOCK_IN_ID_ORDER, RECORD_COLUMNS, record_from_row
from memory.storage.tombstones import lock_users_shared
from memory.storage.user_locks import user_write_lock
from memory.types import MemoryRecord, Scope, Status

if TYPE_CHECKING:
    from memory.storage.store import MemoryStore

MAX_CHAIN = 32
"""How many values back (or forward) a chain is followed: a guard against a corrupt cycle."""

RESTORE_EVENT = "restore"
WRONG_EVENT = "marked_wrong"


class NotRestorable(ValueError):
    """The memory is not a value an update replaced (so there is nothing to restore)."""


@dataclass(frozen=True, slots=True)
class Step:
    """One value in a memory's timeline, with the audit event that ended it (if any)."""

    record: MemoryRecord
    ended_by: dict[str, Any] | None

    @property
    def start(self) -> datetime:
        """When the value began to hold: its window's start, else when it was said."""
        return self.record.valid_from or self.record.occurred_at


def window_text(record: MemoryRecord) -> str:
    """The record's window by day: "2021-03-10 – 2023-05-01", or "since 2023-05-01"."""
    start = (record.valid_from or record.occurred_at).date().isoformat()
    if record.valid_to is None:
        return f"since {start}"
    return f"{start} – {record.valid_to.date().isoformat()}"


async def close_windows(
    store: MemoryStore, scope: Scope, winner: str, replaced: Sequence[str], start: datetime
) -> None:
    """An update: `winner` holds from `start`, each replaced value until then, in one transaction.

    A replaced value said after `start` ("moved in 2022", said of a 2023 statement) ends when it
    was said rather than before it began. No version bump of its own: the supersede that called
    it already bumped the user's version.
    """
    async with store.pool.acquire() as conn, conn.transaction():
        await lock_users_shared(conn, [scope])  # before the row locks (see `store.set_status`)
        # All the rows at once, in the global order: the indexer marking a batch that holds
        # the winner and a replaced value locks them in that order too (else they deadlock).
        await conn.execute(
            f"SELECT id FROM memories WHERE tenant_id = $1 AND user_id = $2"
            f" AND id = ANY($3::text[]) {LOCK_IN_ID_ORDER}",
            scope.tenant_id,
            scope.user_id,
            [winner, *replaced],
        )
        await conn.execute(
            "UPDATE memories SET valid_from = $4"
            " WHERE tenant_id = $1 AND user_id = $2 AND id = $3",
            scope.tenant_id,
            scope.user_id,
            winner,
            start,
        )
        await conn.execute(
            "UPDATE memories SET valid_to = GREATEST($4, COALESCE(valid_from, occurred_at))"
            " WHERE tenant_id = $1 AND user_id = $2 AND id = ANY($3::text[])",
            scope.tenant_id,
            scope.user_id,
            list(replaced),
            start,
        )
    store.cache.invalidate(scope)


async def replaced_values(
    store: MemoryStore, scope: Scope, ids: Sequence[str]
) -> dict[str, list[MemoryRecord]]:
    """Per id, the values updates replaced before it, newest first (closed windows only).

    Newest is the latest window's end, then the latest start: one statement may close two
    windows at once ("decaf these days" after both "cappuccino" and "iced americano"), and the
    value that began later is the one that held last.

    One recursive query for all `ids`: a chain is followed through `superseded_by` links whose
    memory has a `valid_to`, so a duplicate merged away or a value the user marked wrong (no
    window) is not history.
    """
    if not ids:
        return {}
    async with store.pool.acquire() as conn:
        rows = await conn.fetch(
            f"""
            WITH RECURSIVE chain(head, id, depth) AS (
                SELECT m.superseded_by, m.id, 1 FROM memories m
                 WHERE m.tenant_id = $1 AND m.user_id = $2 AND m.superseded_by = ANY($3::text[])
                   AND m.status = 'superseded' AND m.valid_to IS NOT NULL
                UNION ALL
                SELECT c.head, m.id, c.depth + 1 FROM memories m JOIN chain c
                    ON m.superseded_by = c.id
                 WHERE m.tenant_id = $1 AND m.user_id = $2 AND m.status = 'superseded'
                   AND m.valid_to IS NOT NULL AND c.depth < $4
            )
            SELECT c.head, c.depth, {", ".join("m." + col.strip() for col in
                                              RECORD_COLUMNS.split(","))}
              FROM chain c JOIN memories m ON m.id = c.id
             WHERE m.tenant_id = $1 AND m.user_id = $2
             ORDER BY c.head, m.valid_to DESC, COALESCE(m.valid_from, m.occurred_at) DESC, m.id
            """,
            scope.tenant_id,
            scope.user_id,
            list(ids),
            MAX_CHAIN,
        )
    out: dict[str, list[MemoryRecord]] = {}
    for row in rows:
        values = out.setdefault(row["head"], [])
        record = record_from_row(row)
        if all(v.id != record.id for v in values):
            values.append(record)
    return out


async def replaced_recent(
    store: MemoryStore, scope: Scope, *, limit: int = 200
) -> list[MemoryRecord]:
    """The user's values that updates replaced (closed windows), the latest window first."""
    async with store.pool.acquire() as conn:
        rows = await conn.fetch(
            f"SELECT {RECORD_COLUMNS} FROM memories WHERE tenant_id = $1 AND user_id = $2"
            " AND status = 'superseded' AND valid_to IS NOT NULL"
            " ORDER BY valid_to DESC, COALESCE(valid_from, occurred_at) DESC, id LIMIT $3",
            scope.tenant_id,
            scope.user_id,
            limit,
        )
    return [record_from_row(r) for r in rows]


async def timeline(store: MemoryStore, scope: Scope, memory_id: str) -> list[Step]:
    """The chain of values `memory_id` belongs to, oldest first, each with what ended it.

    Followed backwards (the memories it replaced, and theirs) and forwards (`superseded_by`),
    whatever their status; empty when the memory is not this user's.
    """
    record = await store.get(scope, memory_id)
    if record is None:
        return []
    chain = [record]
    seen = {record.id}
    back = record
    while len(chain) < MAX_CHAIN:
        earlier = await _replaced_by(store, scope, back.id, seen)
        if earlier is None:
            break
        chain.insert(0, earlier)
        seen.add(earlier.id)
        back = earlier
    ahead = record
    while ahead.superseded_by and ahead.superseded_by not in seen and len(chain) < MAX_CHAIN:
        later = await store.get(scope, ahead.superseded_by)
        if later is None:
            break
        chain.append(later)
        seen.add(later.id)
        ahead = later
    events = await _ending_events(store, scope, [r.id for r in chain])
    return [Step(r, events.get(r.id)) for r in chain]


async def _replaced_by(
    store: MemoryStore, scope: Scope, memory_id: str, seen: set[str]
) -> MemoryRecord | None:
    """The most recent memory that `memory_id` replaced (any status but deleted)."""
    async with store.pool.acquire() as conn:
        rows = await conn.fetch(
            f"SELECT {RECORD_COLUMNS} FROM memories WHERE tenant_id = $1 AND user_id = $2"
            " AND superseded_by = $3 AND status <> 'deleted'"
            " ORDER BY valid_to DESC NULLS LAST, occurred_at DESC LIMIT 8",
            scope.tenant_id,
            scope.user_id,
            memory_id,
        )
    for row in rows:
        if row["id"] not in seen:
            return record_from_row(row)
    return None


async def _ending_events(
    store: MemoryStore, scope: Scope, ids: list[str]
) -> dict[str, dict[str, Any]]:
    """Per memory, its latest supersede / merge / restore / marked-wrong event."""
    async with store.pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT DISTINCT ON (memory_id) memory_id, event, reason, actor, at"
            " FROM memory_events WHERE tenant_id = $1 AND user_id = $2"
            " AND memory_id = ANY($3::text[])"
            " AND event IN ('supersede', 'merge', 'conflict', 'restore', 'marked_wrong')"
            " ORDER BY memory_id, id DESC",
            scope.tenant_id,
            scope.user_id,
            ids,
        )
    return {r["memory_id"]: dict(r) for r in rows}


async def restore(
    store: MemoryStore, scope: Scope, memory_id: str, *, actor: str = "user"
) -> MemoryRecord:
    """The user says an update was wrong: `memory_id` holds again, its successors were wrong.

    The replaced value becomes active with an open window; every value after it in its chain
    (the one in force included) is superseded by it, its window cleared (it never held), with
    an audit event on each. Raises `NotRestorable` for a memory no update replaced.
    """
    async with (
        user_write_lock(store.pool, scope),
        store.pool.acquire() as conn,
        conn.transaction(),
    ):
        await lock_users_shared(conn, [scope])  # before the row locks (see `store.set_status`)
        row = await conn.fetchrow(
            f"SELECT {RECORD_COLUMNS} FROM memories"
            " WHERE tenant_id = $1 AND user_id = $2 AND id = $3 FOR UPDATE",
            scope.tenant_id,
            scope.user_id,
            memory_id,
        )
        if row is None:
            raise NotRestorable(f"no memory {memory_id} of this user")
        target = record_from_row(row)
        if (
            target.status is not Status.SUPERSEDED
            or target.superseded_by is None
            or target.valid_to is None  # merged away as a duplicate, or marked wrong: no update
        ):
            raise NotRestorable(
                f"memory {memory_id} is {target.status.value}: only a value that an update"
                " replaced can be restored"
            )
        later: list[str] = []
        nxt: str | None = target.superseded_by
        while nxt and nxt not in later and nxt != target.id and len(later) < MAX_CHAIN:
            later.append(nxt)
            nxt = await conn.fetchval(
                "SELECT superseded_by FROM memories"
                " WHERE tenant_id = $1 AND user_id = $2 AND id = $3 AND status <> 'deleted'",
                scope.tenant_id,
                scope.user_id,
                nxt,
            )
        restored = await conn.fetchrow(
            "UPDATE memories SET status = 'active', superseded_by = NULL, valid_to = NULL,"
            " updated_at = now(), version = version + 1"
            " WHERE tenant_id = $1 AND user_id = $2 AND id = $3 RETURNING " + RECORD_COLUMNS,
            scope.tenant_id,
            scope.user_id,
            memory_id,
        )
        await conn.execute(
            "UPDATE memories SET status = 'superseded', superseded_by = $4,"
            " valid_from = NULL, valid_to = NULL, updated_at = now(), version = version + 1"
            " WHERE tenant_id = $1 AND user_id = $2 AND id = ANY($3::text[])"
            " AND status <> 'deleted'",
            scope.tenant_id,
            scope.user_id,
            later,
            memory_id,
        )
        why = "the user said the update was wrong; the earlier value holds again"
        await store.add_event(
            conn, scope, memory_id, RESTORE_EVENT, why, {"wrong": later, "actor": actor}
        )
        for wrong in later:
            await store.add_event(
                conn, scope, wrong, WRONG_EVENT, why, {"restored": memory_id, "actor": actor}
            )
        await store.bump_version(conn, scope)
    store.cache.invalidate(scope)
    return record_from_row(restored)
