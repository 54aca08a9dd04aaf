"""Applying a run's changes as versions: snapshot the prior state, change, log, bump, index.

Every change to an existing row first writes the row's full prior state to `memory_versions`
with the run id, then bumps `version`; a row the run creates gets a version-0 marker. That is
all `rollback()` needs. A change is applied only if the row still has the version the run read
(optimistic check): a chat turn that changed the memory meanwhile wins, and the run skips it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memory.longterm.consolidation.index import queue_index
from memory.longterm.consolidation.snapshot import (
    CREATED_MARKER,
    SNAPSHOT_COLUMNS,
    full_snapshot,
    snapshot_json,
)
from memory.longterm.consolidation.types import Decision, UserRun
from memory.longterm.consolidation.working import adopt, pretend
from memory.storage.rows import INSERT_SQL, RECORD_COLUMNS, insert_params, record_from_row
from memory.storage.store import MemoryStore
from memory.types import MemoryRecord, NewMemory, Status

UPDATE_SQL = (
    """
UPDATE memories SET status = COALESCE($4, status),
    superseded_by = COALESCE($5, superseded_by), confidence = COALESCE($6, confidence),
    importance = COALESCE($7, importance), access_count = COALESCE($8, access_count),
    last_accessed = COALESCE($9, last_accessed), provenance = COALESCE($10::jsonb, provenance),
    version = version + 1, updated_at = now()
WHERE tenant_id = $1 AND user_id = $2 AND id = $3 AND version = $11
RETURNING """
    + RECORD_COLUMNS
)
_EVENT_SQL = (
    "INSERT INTO memory_events (tenant_id, user_id, memory_id, event, reason, detail, actor)"
    " VALUES ($1, $2, $3, $4, $5, $6::jsonb, 'consolidation')"
)


@dataclass(slots=True)
class Change:
    """One planned change to an existing active memory."""

    step: str
    action: str
    memory_id: str
    reason: str
    status: Status | None = None
    superseded_by: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    related: tuple[str, ...] = ()


@dataclass(slots=True)
class Insert:
    """One memory the run creates."""

    step: str
    memory_id: str
    memory: NewMemory
    reason: str
    related: tuple[str, ...] = ()


def _update_params(run: UserRun, change: Change) -> tuple[Any, ...]:
    f = change.fields
    provenance = f.get("provenance")
    return (
        run.scope.tenant_id, run.scope.user_id, change.memory_id,
        change.status.value if change.status else None, change.superseded_by,
        f.get("confidence"), f.get("importance"), f.get("access_count"), f.get("last_accessed"),
        json.dumps(provenance, ensure_ascii=False, default=str) if provenance is not None else None,
        run.records[change.memory_id].version,
    )  # fmt: skip


def _event(
    run: UserRun, memory_id: str, event: str, reason: str, related: Sequence[str]
) -> tuple[str, ...]:
    detail = json.dumps({"run_id": run.run_id, "related": list(related)})
    return (run.scope.tenant_id, run.scope.user_id, memory_id, event, reason, detail)


async def apply(
    store: MemoryStore, run: UserRun, changes: Sequence[Change], inserts: Sequence[Insert] = ()
) -> int:
    """Apply (or in a dry run, pretend) a step's changes; return how many took effect."""
    changes = [c for c in changes if c.memory_id in run.records]
    if not changes and not inserts:
        return 0
    vectors = await store.embedder.aembed([store.embed_text(i.memory) for i in inserts])
    if run.dry_run:
        return pretend(run, changes, inserts, vectors)
    created: list[MemoryRecord] = []
    updated: list[MemoryRecord] = []
    async with store.pool.acquire() as conn, conn.transaction():
        for item, vector in zip(inserts, vectors, strict=True):
            created.append(await _insert(conn, store, run, item, vector))
        locked = await conn.fetch(
            f"SELECT {SNAPSHOT_COLUMNS} FROM memories WHERE tenant_id = $1 AND user_id = $2"
            " AND id = ANY($3::text[]) FOR UPDATE",
            run.scope.tenant_id, run.scope.user_id, [c.memory_id for c in changes],
        )  # fmt: skip
        current = {row["id"]: row for row in locked}
        for change in changes:
            row = await _update(conn, run, change, current.get(change.memory_id))
            if row is not None:
                updated.append(row)
        await store._bump(conn, run.scope)
    store.cache.invalidate(run.scope)
    adopt(run, created, vectors, updated)
    queue_index(run, created, updated)
    return len(created) + len(updated)


async def _insert(
    conn: Any, store: MemoryStore, run: UserRun, item: Insert, vector: Any
) -> MemoryRecord:
    params = insert_params(
        item.memory_id, run.scope.tenant_id, run.scope.user_id, item.memory, vector,
        store.embedder.name,
    )  # fmt: skip
    record = record_from_row(await conn.fetchrow(INSERT_SQL, *params))
    await conn.execute(
        "INSERT INTO memory_versions (memory_id, version, tenant_id, user_id, snapshot, run_id)"
        " VALUES ($1, 0, $2, $3, $4::jsonb, $5)",
        record.id, run.scope.tenant_id, run.scope.user_id, json.dumps(CREATED_MARKER), run.run_id,
    )  # fmt: skip
    await conn.execute(_EVENT_SQL, *_event(run, record.id, "consolidate_create", item.reason,
                                           item.related))  # fmt: skip
    run.decisions.append(Decision(item.step, "create", record.id, item.reason, item.related))
    return record


async def _update(conn: Any, run: UserRun, change: Change, row: Any) -> MemoryRecord | None:
    expected = run.records[change.memory_id].version
    if row is None or row["version"] != expected or row["status"] != "active":
        why = "changed by someone else since the run read it; skipped"
        run.decisions.append(Decision(change.step, "skipped", change.memory_id, why))
        return None
    await conn.execute(
        "INSERT INTO memory_versions (memory_id, version, tenant_id, user_id, snapshot, run_id)"
        " VALUES ($1, $2, $3, $4, $5::jsonb, $6)",
        change.memory_id, row["version"], run.scope.tenant_id, run.scope.user_id,
        snapshot_json(full_snapshot(row)), run.run_id,
    )  # fmt: skip
    updated = await conn.fetchrow(UPDATE_SQL, *_update_params(run, change))
    await conn.execute(_EVENT_SQL, *_event(run, change.memory_id, f"consolidate_{change.action}",
                                           change.reason, change.related))  # fmt: skip
    run.decisions.append(
        Decision(change.step, change.action, change.memory_id, change.reason, change.related)
    )
    return record_from_row(updated)
