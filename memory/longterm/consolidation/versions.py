"""Applying a run's changes as versions, and keeping the run's working set in step with them.

Every change to an existing row first writes the row's full prior state to `memory_versions`
with the run id, then bumps `version`; a row the run creates gets a version-0 marker. That is
all `rollback()` needs. A change is applied only if the row still has the version the run read
(optimistic check): a chat turn that changed the memory meanwhile wins, and the run skips it.
The same check, under the same row locks, guards what a change or a new row is made from (its
`related` memories): a memory deleted or edited since the run read it comes back through no
distillation or merge, and what pointed at a skipped new row is skipped with it.
A dry run applies nothing: it records the decisions and changes only the working set, so later
steps plan on the state the earlier ones would have left.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

import numpy as np

from memory.longterm.consolidation.index import queue_index
from memory.longterm.consolidation.types import Decision, UserRun
from memory.storage import versions
from memory.storage.rows import content_hash
from memory.storage.store import MemoryStore
from memory.types import MemoryRecord, NewMemory, Status


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


def _detail(run: UserRun, related: Sequence[str]) -> dict[str, Any]:
    return {"run_id": run.run_id, "related": list(related)}


async def apply(
    store: MemoryStore, run: UserRun, changes: Sequence[Change], inserts: Sequence[Insert] = ()
) -> int:
    """Apply (or in a dry run, pretend) a step's changes; return how many took effect."""
    changes = [c for c in changes if c.memory_id in run.records]
    if not changes and not inserts:
        return 0
    vectors, own = await store.embed_memories([i.memory for i in inserts])
    if run.dry_run:
        return pretend(run, changes, inserts, vectors)
    created: list[MemoryRecord] = []
    kept_vectors: list[Any] = []
    updated: list[MemoryRecord] = []
    new_ids = {i.memory_id for i in inserts}
    async with store.pool.acquire() as conn, conn.transaction():
        # Every row the step reads from or changes is locked and re-read first, before anything
        # is written: a memory the user deleted (or edited) since the run loaded it must not
        # come back through a memory made from it (a distillation repeats a member verbatim).
        # A deletion that commits first is seen here; one that comes after waits for this
        # transaction and then deletes the row as superseded.
        named = sorted(_named(changes, inserts) - new_ids)
        current = await versions.lock_rows(conn, run.scope, named)
        stale = _stale(run, named, current)
        for item, vector, own_vector in zip(inserts, vectors, own, strict=True):
            if stale.intersection(item.related):
                stale.add(item.memory_id)  # and so are the changes that point at it
                run.decisions.append(Decision(item.step, "skipped", item.memory_id, _GONE,
                                              item.related))  # fmt: skip
                continue
            if store.own_text(item.memory) is None:
                own_vector = None  # stored only where it differs from `vector`
            created.append(await _insert(conn, store, run, item, vector, own_vector))
            kept_vectors.append(vector)
        for change in changes:
            if stale.intersection(change.related):
                run.decisions.append(Decision(change.step, "skipped", change.memory_id, _GONE,
                                              change.related))  # fmt: skip
                continue
            row = await _update(conn, run, change, current.get(change.memory_id))
            if row is not None:
                updated.append(row)
        await store.bump_version(conn, run.scope)
    store.cache.invalidate(run.scope)
    for memory_id in named:
        if memory_id not in current:  # deleted meanwhile: later steps must not plan on it
            run.records.pop(memory_id, None)
            run.vectors.pop(memory_id, None)
    adopt(run, created, kept_vectors, updated)
    queue_index(run, created, updated)
    return len(created) + len(updated)


_GONE = "a memory it is made from was deleted or changed since the run read it; skipped"


def _named(changes: Sequence[Change], inserts: Sequence[Insert]) -> set[str]:
    """Every memory a step's plan changes or is made from."""
    ids = {c.memory_id for c in changes}
    for related in [c.related for c in changes] + [i.related for i in inserts]:
        ids.update(related)
    return ids


def _stale(run: UserRun, ids: Sequence[str], current: dict[str, Any]) -> set[str]:
    """The ids whose row is gone, left `active`, or changed since the run read it."""
    stale = set()
    for memory_id in ids:
        row, read = current.get(memory_id), run.records.get(memory_id)
        now = None if row is None else (row["status"], row["version"])
        if read is None or now != ("active", read.version):
            stale.add(memory_id)
    return stale


async def _insert(
    conn: Any, store: MemoryStore, run: UserRun, item: Insert, vector: Any, own: Any
) -> MemoryRecord:
    record = await versions.insert_created(
        conn, run.scope, item.memory_id, item.memory, vector, store.embedder.name, run.run_id,
        own=own,
    )  # fmt: skip
    await versions.log_event(conn, run.scope, record.id, "consolidate_create", item.reason,
                             _detail(run, item.related))  # fmt: skip
    run.decisions.append(Decision(item.step, "create", record.id, item.reason, item.related))
    return record


async def _update(conn: Any, run: UserRun, change: Change, row: Any) -> MemoryRecord | None:
    expected = run.records[change.memory_id].version
    if row is None or row["version"] != expected or row["status"] != "active":
        why = "changed by someone else since the run read it; skipped"
        run.decisions.append(Decision(change.step, "skipped", change.memory_id, why))
        return None
    updated = await versions.update_versioned(
        conn, run.scope, row, run.run_id,
        status=change.status.value if change.status else None,
        superseded_by=change.superseded_by, fields=change.fields,
    )  # fmt: skip
    await versions.log_event(conn, run.scope, change.memory_id, f"consolidate_{change.action}",
                             change.reason, _detail(run, change.related))  # fmt: skip
    run.decisions.append(
        Decision(change.step, change.action, change.memory_id, change.reason, change.related)
    )
    return updated


def adopt(
    run: UserRun,
    created: Sequence[MemoryRecord],
    vectors: Any,
    updated: Sequence[MemoryRecord],
) -> None:
    """Put rows the run wrote into the working set; drop the ones that left `active`."""
    for record, vector in zip(created, vectors, strict=True):
        run.records[record.id] = record
        run.vectors[record.id] = np.asarray(vector, dtype=np.float32)
        run.touched.add(record.id)
    for record in updated:
        run.touched.add(record.id)
        if record.status is Status.ACTIVE:
            run.records[record.id] = record
        else:
            run.records.pop(record.id, None)


def virtual_record(run: UserRun, item: Insert) -> MemoryRecord:
    """The record an insert would create, for planning a dry run's later steps."""
    m = item.memory
    occurred = m.occurred_at or run.now
    return MemoryRecord(
        id=item.memory_id, tenant_id=run.scope.tenant_id, user_id=run.scope.user_id,
        kind=m.kind, content=m.content, source=m.source, origin=m.origin, category=m.category,
        importance=m.importance, confidence=m.confidence, created_at=run.now,
        occurred_at=occurred,
        expires_at=occurred + timedelta(days=m.ttl_days) if m.ttl_days else None,
        access_count=0, last_accessed=None, status=m.status, superseded_by=None,
        provenance=dict(m.provenance), content_hash=content_hash(m.content), version=1,
        indexed_at=None, pinned=m.pinned, context=m.context, outcome=m.outcome,
        tags=list(m.tags),
    )  # fmt: skip


def _changed(record: MemoryRecord, change: Change) -> MemoryRecord:
    fields = {k: v for k, v in change.fields.items() if v is not None}
    return replace(
        record,
        status=change.status or record.status,
        superseded_by=change.superseded_by or record.superseded_by,
        version=record.version + 1,
        **fields,
    )


def pretend(
    run: UserRun,
    changes: Sequence[Change],
    inserts: Sequence[Insert],
    vectors: Any,
) -> int:
    """A dry run's apply: record the decisions and update only the in-memory working set."""
    created = [virtual_record(run, item) for item in inserts]
    for item in inserts:
        decision = Decision(item.step, "create", item.memory_id, item.reason, item.related)
        run.decisions.append(decision)
    updated = []
    for change in changes:
        updated.append(_changed(run.records[change.memory_id], change))
        run.decisions.append(
            Decision(change.step, change.action, change.memory_id, change.reason, change.related)
        )
    adopt(run, created, vectors, updated)
    return len(created) + len(updated)
