"""Chroma follows Postgres, once per user and run: queued removals and upserts, flushed together.

A run applies dozens of small changes per user (one per distilled theme); syncing Chroma after
each cost 3 embedded-Chroma calls a change, and even one flush per step took 13 of 20 s on
10,000 memories (a scoped delete is ~20 ms against a 10,000-entry collection), so the changes
are queued in the run and flushed in at most four calls when the user's run closes. The run
itself plans on its working set, never on Chroma. If the process dies before the flush, the run
is interrupted and its rollback re-syncs those rows.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from memory.longterm.consolidation.types import UserRun
from memory.storage.store import MemoryStore
from memory.storage.vector import VectorIndexError
from memory.types import MemoryRecord, Status

log = logging.getLogger(__name__)


def queue_index(
    run: UserRun, created: Sequence[MemoryRecord], updated: Sequence[MemoryRecord]
) -> None:
    """Remember which rows must leave or (re-)enter the index."""
    for record in [*created, *updated]:
        if record.status is Status.ACTIVE:
            run.index_gone.discard(record.id)
            run.index_put[record.id] = record
        else:
            run.index_put.pop(record.id, None)
            run.index_gone.add(record.id)
    run.index_created.update(r.id for r in created)


async def flush_index(store: MemoryStore, run: UserRun) -> None:
    """Apply the queued index changes; created rows are marked indexed once Chroma has them."""
    gone, put = sorted(run.index_gone), list(run.index_put.values())
    created = [r for r in put if r.id in run.index_created]
    run.index_gone, run.index_put, run.index_created = set(), {}, set()
    try:
        await store.index.delete(run.scope, gone)
        existing = [r for r in put if r.id not in {c.id for c in created}]
        if existing:
            await store.index.upsert(existing, np.vstack([run.vectors[r.id] for r in existing]))
    except VectorIndexError as exc:  # Postgres is the record; recall reads it, not Chroma
        log.warning("Chroma unavailable while consolidating %s: %s", run.scope.key, exc)
    if created:
        # Rows the run created are marked indexed only once Chroma has them (reindex otherwise).
        await store.index_records(
            run.scope, created, np.vstack([run.vectors[r.id] for r in created])
        )
