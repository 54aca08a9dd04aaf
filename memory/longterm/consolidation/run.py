"""Running consolidation: the `consolidate()` loop over batches of users, and its summary.

For one user, or every user in batches: expire TTLs → forget by decay → cluster episodes →
distil stable themes into long-term memory (low-confidence ones stay episodic) → merge
near-duplicates (cosine ≥ 0.92) → resolve conflicts with the gate's policy. Every change is a
new version with an audit event, so a run can be inspected (`history`) and rolled back
(`rollback(store, run_id)`); a per-user advisory lock keeps two runs for one user apart.

The `consolidate` graph (agent/consolidate_graph.py) runs the same steps one node each; this
module's `consolidate()` runs them in a loop for scripts, tests and the benchmark.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from langchain_core.language_models import BaseChatModel

from memory.longterm.consolidation.batch import RunBatch
from memory.longterm.consolidation.types import STEPS, ConsolidationPolicy, StepContext
from memory.storage.consolidation_runs import list_scopes
from memory.storage.store import MemoryStore
from memory.types import Scope

MAX_DECISIONS_RETURNED = 200


def new_run_id(now: datetime | None = None) -> str:
    """A sortable, unique run id: UTC time plus 8 random hex digits."""
    return f"{(now or datetime.now(UTC)):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"


@dataclass(slots=True)
class RunSummary:
    """What a run did across its users (the per-user detail is in `consolidation_runs`)."""

    run_id: str
    dry_run: bool
    users: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)

    def absorb(self, batch: RunBatch) -> None:
        """Add a closed batch's users, counts and (the first 200) decisions."""
        self.users += len(batch.runs)
        self.skipped += batch.skipped
        self.errors += batch.errors
        self.recovered += batch.recovered
        for run in batch.runs.values():
            for key, value in run.counts.items():
                self.counts[key] = self.counts.get(key, 0) + value
            room = MAX_DECISIONS_RETURNED - len(self.decisions)
            self.decisions += [{"user": run.scope.key, **d.as_dict()} for d in run.decisions[:room]]

    def as_dict(self) -> dict[str, Any]:
        """JSON form (graph output, CLI --json)."""
        return {
            "run_id": self.run_id,
            "dry_run": self.dry_run,
            "users": self.users,
            "counts": dict(self.counts),
            "skipped": list(self.skipped),
            "errors": list(self.errors),
            "recovered": list(self.recovered),
            "decisions": list(self.decisions),
        }


async def next_scopes(
    store: MemoryStore,
    *,
    scope: Scope | None,
    tenant: str | None,
    cursor: list[str] | None,
    batch_size: int,
) -> list[Scope]:
    """The next batch of users: the one user, or the next `batch_size` after `cursor`."""
    if scope is not None:
        return [] if cursor else [scope]
    return await list_scopes(store.pool, tenant=tenant, after=cursor, limit=batch_size)


async def consolidate(
    store: MemoryStore,
    *,
    scope: Scope | None = None,
    tenant: str | None = None,
    dry_run: bool = False,
    policy: ConsolidationPolicy | None = None,
    model: BaseChatModel | None = None,
    now: datetime | None = None,
    batch_size: int = 50,
    on_batch: Callable[[int], None] | None = None,
) -> RunSummary:
    """Consolidate one user (`scope`) or every user (of `tenant`, if given), in batches."""
    ctx = StepContext(store, policy or ConsolidationPolicy(), model)
    now = now or datetime.now(UTC)
    summary = RunSummary(new_run_id(), dry_run)
    cursor: list[str] | None = None
    while scopes := await next_scopes(
        store, scope=scope, tenant=tenant, cursor=cursor, batch_size=batch_size
    ):
        batch = await RunBatch.open(ctx, summary.run_id, scopes, now=now, dry_run=dry_run)
        for step in STEPS:
            await batch.run_step(step)
        await batch.close()
        summary.absorb(batch)
        if on_batch is not None:
            on_batch(len(scopes))
        cursor = [scopes[-1].tenant_id, scopes[-1].user_id]
    return summary


__all__ = ["MAX_DECISIONS_RETURNED", "RunSummary", "consolidate", "new_run_id", "next_scopes"]
