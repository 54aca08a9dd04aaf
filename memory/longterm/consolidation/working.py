"""Keeping a run's working set in step with what it changed (or, in a dry run, would change)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from memory.longterm.consolidation.types import Decision, UserRun
from memory.storage.rows import content_hash
from memory.types import MemoryRecord, Status

if TYPE_CHECKING:  # imported for types only: the versions module imports this one
    from memory.longterm.consolidation.versions import Change, Insert


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
