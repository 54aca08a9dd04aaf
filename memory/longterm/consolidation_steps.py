"""The consolidation steps for one user: expire, decay_cleanup, cluster, merge_duplicates.

Each step plans on the run's working set with the pure functions, then applies the plan as
versioned changes (`consolidation_versions.apply`), which in a dry run only pretends. Distil and
conflict resolution live in their own modules; `STEP_FUNCTIONS` lists all six in order.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import numpy as np

from memory.gating.rules.turn import is_instruction_like
from memory.longterm.consolidation_cluster import cluster
from memory.longterm.consolidation_conflict_step import resolve_conflicts
from memory.longterm.consolidation_decay import decayed, expired, purge_cutoff
from memory.longterm.consolidation_distil_step import distil_clusters
from memory.longterm.consolidation_merge import merged_fields, near_duplicates
from memory.longterm.consolidation_types import StepContext, UserRun
from memory.longterm.consolidation_versions import Change, apply
from memory.types import Category, MemoryRecord, Source, Status

Step = Callable[[StepContext, UserRun], Awaitable[int]]


async def expire(ctx: StepContext, run: UserRun) -> int:
    """Expire memories past their TTL; delete rows expired longer than the rollback window."""
    changes = [
        Change(
            "expire",
            "expire",
            r.id,
            f"TTL passed at {r.expires_at:%Y-%m-%d %H:%M}",
            status=Status.EXPIRED,
        )  # fmt: skip
        for r in expired(run.active(), run.now)
        if r.expires_at is not None
    ]
    run.count("expired", await apply(ctx.store, run, changes))
    run.count("purged", await _purge(ctx, run))
    return run.counts.get("expired", 0)


async def _purge(ctx: StepContext, run: UserRun) -> int:
    # The rollback window is measured on the database clock: a run "as of" a future date must
    # not destroy rows that were expired a moment ago.
    cutoff = purge_cutoff(min(run.now, datetime.now(UTC)), ctx.policy)
    t, u = run.scope.tenant_id, run.scope.user_id
    where = "tenant_id = $1 AND user_id = $2 AND status = 'expired' AND updated_at < $3"
    async with ctx.store.pool.acquire() as conn:
        if run.dry_run:
            return int(await conn.fetchval(f"SELECT count(*) FROM memories WHERE {where}",
                                           t, u, cutoff))  # fmt: skip
        async with conn.transaction():
            ids = [r["id"] for r in await conn.fetch(
                f"DELETE FROM memories WHERE {where} RETURNING id", t, u, cutoff)]  # fmt: skip
            # History of a purged memory goes with it (DESIGN §7: no text left in history).
            await conn.execute(
                "DELETE FROM memory_versions WHERE tenant_id = $1 AND user_id = $2"
                " AND memory_id = ANY($3::text[])",
                t, u, ids,
            )  # fmt: skip
    if ids:
        await ctx.store.index.delete(run.scope, ids)
    return len(ids)


async def decay_cleanup(ctx: StepContext, run: UserRun) -> int:
    """Forget unpinned memories whose seed-000 relevance fell below the threshold."""
    changes = [
        Change("decay_cleanup", "forget", r.id,
               f"relevance {score:.3f} < {ctx.policy.decay_threshold}", status=Status.EXPIRED)
        for r, score in decayed(run.active(), run.now, ctx.policy)
    ]  # fmt: skip
    run.count("forgotten", await apply(ctx.store, run, changes))
    return run.counts.get("forgotten", 0)


def clusterable(record: MemoryRecord) -> bool:
    """Episodes that may feed a rule: not tool output, not low-trust, not instructions."""
    return (
        record.source not in (Source.TOOL, Source.CONSOLIDATION)
        and record.provenance.get("trust", "normal") != "low"
        and record.category is not Category.NOISE
        and not is_instruction_like(record.content)
    )


async def cluster_episodes(ctx: StepContext, run: UserRun) -> int:
    """Group the user's episodes by embedding; keep the groups for distillation."""
    episodes = [r for r in run.active(episodic=True) if clusterable(r)]
    episodes = episodes[-ctx.policy.max_cluster_items :]
    if len(episodes) < 2:
        run.clusters = []
        return 0
    matrix = np.vstack([run.vectors[r.id] for r in episodes])
    groups = cluster(matrix, threshold=ctx.policy.cluster_threshold, min_size=2)
    run.clusters = [[episodes[i].id for i in group] for group in groups]
    run.count("clusters", len(run.clusters))
    run.count("themes", sum(len(g) >= ctx.policy.min_support for g in run.clusters))
    return len(run.clusters)


async def merge_duplicates(ctx: StepContext, run: UserRun) -> int:
    """Merge long-term memories at cosine ≥ the merge threshold into the strongest of them."""
    records = run.active(episodic=False)
    if len(records) < 2:
        return 0
    matrix = np.vstack([run.vectors[r.id] for r in records])
    changes: list[Change] = []
    for group in near_duplicates(records, matrix, threshold=ctx.policy.merge_threshold):
        keep = group.survivor.id
        absorbed = tuple(r.id for r, _ in group.absorbed)
        fields = merged_fields(group)
        if fields:
            changes.append(Change("merge_duplicates", "absorb", keep,
                                  f"absorbed {len(absorbed)} near-duplicate(s)", fields=fields,
                                  related=absorbed))  # fmt: skip
        for record, sim in group.absorbed:
            changes.append(Change("merge_duplicates", "supersede", record.id,
                                  f"near-duplicate of {keep} (cosine {sim:.3f})",
                                  status=Status.SUPERSEDED, superseded_by=keep,
                                  related=(keep,)))  # fmt: skip
    await apply(ctx.store, run, changes)
    merged = sum(c.action == "supersede" for c in changes)
    run.count("merged", merged)
    return merged


STEP_FUNCTIONS: dict[str, Step] = {
    "expire": expire,
    "decay_cleanup": decay_cleanup,
    "cluster": cluster_episodes,
    "distil": distil_clusters,
    "merge_duplicates": merge_duplicates,
    "resolve_conflicts": resolve_conflicts,
}
