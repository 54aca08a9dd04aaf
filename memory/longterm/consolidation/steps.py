"""The six consolidation steps for one user, in order, as applied to the run's working set.

Each step plans on the working set with the pure functions (decay, cluster, distil, merge, the
gate's conflict policy), then applies the plan as versioned changes (`versions.apply`), which
in a dry run only pretends.

- expire: memories past their TTL expire; rows expired longer than the rollback window go.
- decay_cleanup: unpinned memories whose relevance fell below the threshold are forgotten.
- cluster: the user's episodes are grouped by embedding.
- distil: each stable theme becomes one long-term memory (PREFERENCE / PROCEDURAL / SEMANTIC,
  origin LEARNED, source CONSOLIDATION) unless an active long-term memory already says the
  same (cosine ≥ the reinforce threshold, same polarity): then that one gains confidence
  instead of getting a twin. Either way the episodes it was distilled from are superseded by
  it: kept, linked, out of recall. A theme that is not promoted stays episodic, and the reason
  is recorded.
- merge_duplicates: long-term memories at cosine ≥ the merge threshold are merged.
- resolve_conflicts: every long-term memory the run created or changed is checked, as the
  incoming statement, against the user's other active long-term memories that resemble it
  (`memory.gating.conflicts`): explicit > learned > inferred, a newer statement beats an older
  one of equal standing, pinned rules are never overridden, list-like memories are merged,
  ambiguous cases are marked and left for a person. Losers are superseded (kept, linked, out of
  recall); every conflict is audited.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import numpy as np

from memory.gating.conflicts import Candidate, Existing, Resolution, resolve
from memory.gating.rules.turn import is_instruction_like
from memory.longterm.consolidation.agreement import is_negative
from memory.longterm.consolidation.cluster import centroid, cluster, cosines, normalise_rows
from memory.longterm.consolidation.decay import decayed, expired, purge_cutoff
from memory.longterm.consolidation.distil import Distillation, confidence_from, distil
from memory.longterm.consolidation.merge import merged_fields, near_duplicates, survivor_key
from memory.longterm.consolidation.model import distil_with_model
from memory.longterm.consolidation.types import Decision, StepContext, UserRun
from memory.longterm.consolidation.versions import Change, Insert, apply
from memory.storage import versions
from memory.storage.calibration import CosineMap
from memory.storage.rows import new_id
from memory.types import Category, MemoryKind, MemoryRecord, NewMemory, Origin, Source, Status

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
    if run.dry_run:
        return await versions.count_purgeable(ctx.store.pool, run.scope, cutoff)
    ids = await versions.purge_expired(ctx.store.pool, run.scope, cutoff)
    if ids:
        await ctx.store.index.delete(run.scope, ids)
    return len(ids)


async def decay_cleanup(ctx: StepContext, run: UserRun) -> int:
    """Forget unpinned memories whose relevance (`decay.relevance`) fell below the threshold."""
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
    groups = cluster(matrix, threshold=ctx.policy.cluster_threshold, min_size=2,
                     to_reference=_map(ctx))  # fmt: skip
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
    found = near_duplicates(
        records, matrix, threshold=ctx.policy.merge_threshold, to_reference=_map(ctx)
    )
    for group in found:
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


async def distil_clusters(ctx: StepContext, run: UserRun) -> int:
    """Judge every cluster found by the cluster step; promote the stable ones."""
    promoted = 0
    for ids in run.clusters:
        members = [run.records[i] for i in ids if i in run.records]
        members.sort(key=lambda r: (r.occurred_at, r.id))
        if len(members) < 2:
            continue
        verdict = await _judge(ctx, members, np.vstack([run.vectors[r.id] for r in members]))
        if not verdict.promote:
            run.count("kept_episodic", len(members))
            run.decisions.append(
                Decision(
                    "distil",
                    "keep_episodic",
                    members[-1].id,
                    verdict.reason,
                    verdict.evidence_ids,
                    verdict.metrics,
                )  # fmt: skip
            )
            continue
        evidence = set(verdict.evidence_ids)
        promoted += await _promote(ctx, run, [m for m in members if m.id in evidence], verdict)
    run.count("promoted", promoted)
    return promoted


async def _judge(
    ctx: StepContext, members: list[MemoryRecord], vectors: np.ndarray
) -> Distillation:
    eligible = len(members) >= ctx.policy.min_support
    if eligible:
        # The contradiction check embeds value words (ONNX, blocking): off the event loop.
        embed = ctx.store.embedder.embed
        verdict = await asyncio.to_thread(distil, members, vectors, ctx.policy, embed, _map(ctx))
    else:
        verdict = distil(members, vectors, ctx.policy, to_reference=_map(ctx))
    if ctx.model is not None and eligible:
        # The model only sees themes with enough support: one call per theme, not per pair.
        return await distil_with_model(ctx.model, members, verdict)
    return verdict


def _twin(run: UserRun, members: list[MemoryRecord], verdict: Distillation, threshold: float,
          to_reference: CosineMap | None = None) -> tuple[MemoryRecord, float] | None:  # fmt: skip
    """An active long-term memory that already states this theme, if any."""
    longterm = run.active(episodic=False)
    if not longterm:
        return None
    direction = centroid(np.vstack([run.vectors[r.id] for r in members]))
    rows = normalise_rows(np.vstack([run.vectors[r.id] for r in longterm]))
    sims = cosines(rows, direction, to_reference)
    negative = is_negative(verdict.content)
    for pos in np.argsort(-sims):
        record = longterm[int(pos)]
        if sims[pos] < threshold:
            break
        if is_negative(record.content) == negative:
            return record, float(sims[pos])
    return None


async def _promote(
    ctx: StepContext, run: UserRun, members: list[MemoryRecord], verdict: Distillation
) -> int:
    evidence = [r.id for r in members]
    detail = {**verdict.metrics, "method": verdict.method, "run_id": run.run_id}
    twin = _twin(run, members, verdict, ctx.policy.reinforce_threshold, _map(ctx))
    changes: list[Change] = []
    inserts: list[Insert] = []
    if twin is not None and not twin[0].pinned:
        target = twin[0]
        seen = list(target.provenance.get("evidence", []))
        fields = {
            "confidence": confidence_from(float(verdict.metrics["evidence"]),
                                          [target.confidence, verdict.confidence]),
            "provenance": {**target.provenance, "evidence": seen + evidence,
                           "reinforced_by": run.run_id},
        }  # fmt: skip
        changes.append(Change("distil", "reinforce", target.id,
                              f"{verdict.reason}; same as this memory (cosine {twin[1]:.3f})",
                              fields=fields, related=tuple(evidence)))  # fmt: skip
        target_id = target.id
        run.count("reinforced")
    elif twin is not None:
        target_id = twin[0].id  # a pinned rule already says it: link the episodes, change nothing
    else:
        target_id = new_id()
        inserts.append(Insert("distil", target_id, _new_memory(members, verdict, detail),
                              f"distilled: {verdict.reason} ({verdict.method})",
                              tuple(evidence)))  # fmt: skip
    for record in members:
        changes.append(Change("distil", "consolidate", record.id,
                              f"consolidated into {target_id}", status=Status.SUPERSEDED,
                              superseded_by=target_id, related=(target_id,)))  # fmt: skip
    await apply(ctx.store, run, changes, inserts)
    run.count("episodes_consolidated", len(members))
    # A new row is skipped when a member was deleted or changed meanwhile (`versions.apply`).
    return 1 if inserts and target_id in run.records else 0


def _new_memory(
    members: list[MemoryRecord], verdict: Distillation, detail: dict[str, object]
) -> NewMemory:
    return NewMemory(
        content=verdict.content,
        kind=verdict.kind if verdict.kind is not MemoryKind.EPISODIC else MemoryKind.SEMANTIC,
        source=Source.CONSOLIDATION,
        origin=Origin.LEARNED,
        category=verdict.category,
        importance=verdict.importance,
        confidence=verdict.confidence,
        ttl_days=None,
        occurred_at=members[-1].occurred_at,
        provenance={"evidence": [r.id for r in members], "distillation": detail},
    )


async def resolve_conflicts(ctx: StepContext, run: UserRun) -> int:
    """Resolve the run's new or changed long-term memories against the rest."""
    incoming = [r for r in run.active(episodic=False) if r.id in run.touched]
    handled = 0
    for record in incoming:
        if record.id not in run.records:  # superseded by an earlier resolution of this step
            continue
        existing = _neighbours(ctx, run, record)
        if not existing:
            continue
        candidate = Candidate(record.content, record.category, record.origin, record.occurred_at)
        resolution = await asyncio.to_thread(
            resolve, candidate, existing, dup_threshold=ctx.policy.merge_threshold,
            embed=ctx.store.embedder.embed,
            to_reference=None if ctx.store.scale.identity else ctx.store.scale.one,
        )  # fmt: skip
        handled += await _apply(ctx, run, record, resolution)
    return handled


def _neighbours(ctx: StepContext, run: UserRun, record: MemoryRecord) -> list[Existing]:
    others = [r for r in run.active(episodic=False) if r.id != record.id]
    if not others:
        return []
    vector = normalise_rows(run.vectors[record.id][None, :])[0]
    rows = normalise_rows(np.vstack([run.vectors[r.id] for r in others]))
    sims = cosines(rows, vector, _map(ctx))
    order = [int(i) for i in np.argsort(-sims)[: ctx.policy.conflict_candidates]]
    return [
        Existing(
            others[i].id,
            others[i].content,
            float(sims[i]),
            others[i].origin,
            others[i].category,
            others[i].occurred_at,
            others[i].pinned,
        )  # fmt: skip
        for i in order
        if sims[i] >= ctx.policy.conflict_min_similarity
    ]


def _map(ctx: StepContext) -> CosineMap | None:
    """The store's cosine map onto the reference scale; None for the reference model."""
    scale = ctx.store.scale
    return None if scale.identity else scale.to_reference


def _supersede(record_id: str, winner: str, reason: str) -> Change:
    return Change("resolve_conflicts", "supersede", record_id, reason, status=Status.SUPERSEDED,
                  superseded_by=winner, related=(winner,))  # fmt: skip


async def _apply(
    ctx: StepContext, run: UserRun, record: MemoryRecord, resolution: Resolution
) -> int:
    targets = [run.records[t] for t in resolution.target_ids if t in run.records]
    why = f"conflict: {resolution.reason}" if resolution.conflict else resolution.reason
    changes: list[Change] = []
    inserts: list[Insert] = []
    if resolution.action == "update_existing" and targets:
        winner, loser = sorted([record, targets[0]], key=survivor_key, reverse=True)
        if not loser.pinned:
            changes.append(_supersede(loser.id, winner.id, f"duplicate of {winner.id}: {why}"))
    elif resolution.action == "supersede":
        changes += [_supersede(t.id, record.id, why) for t in targets if not t.pinned]
    elif resolution.action == "reject" and targets and not record.pinned:
        changes.append(_supersede(record.id, targets[0].id, why))
    elif resolution.action == "merge" and targets and resolution.merged_content:
        merged = _merged(record, targets[0], resolution.merged_content)
        inserts.append(
            Insert("resolve_conflicts", merged[0], merged[1], why, (record.id, targets[0].id))
        )
        changes += [_supersede(r.id, merged[0], why) for r in (record, targets[0])]
    elif resolution.action == "mark_conflict":
        await _mark(ctx, run, record, resolution, why)
    if not changes and not inserts and resolution.action != "mark_conflict":
        return 0
    await apply(ctx.store, run, changes, inserts)
    run.count("conflicts" if resolution.conflict else "duplicates")
    return 1


async def _mark(
    ctx: StepContext, run: UserRun, record: MemoryRecord, resolution: Resolution, why: str
) -> None:
    """Both stay; the conflict is logged for a person to decide."""
    related = tuple(resolution.target_ids)
    run.decisions.append(Decision("resolve_conflicts", "mark_conflict", record.id, why, related))
    if not run.dry_run:
        detail = {"run_id": run.run_id, "related": list(related)}
        await ctx.store.record_event(run.scope, record.id, "conflict", why, detail)


def _merged(record: MemoryRecord, target: MemoryRecord, content: str) -> tuple[str, NewMemory]:
    stronger = max((record, target), key=survivor_key)
    memory = NewMemory(
        content=content,
        kind=target.kind,
        source=Source.CONSOLIDATION,
        origin=stronger.origin,
        category=target.category,
        importance=max(record.importance, target.importance),
        confidence=max(record.confidence, target.confidence),
        ttl_days=None,
        occurred_at=max(record.occurred_at, target.occurred_at),
        provenance={"merged_from": [target.id, record.id]},
    )
    return new_id(), memory


STEP_FUNCTIONS: dict[str, Step] = {
    "expire": expire,
    "decay_cleanup": decay_cleanup,
    "cluster": cluster_episodes,
    "distil": distil_clusters,
    "merge_duplicates": merge_duplicates,
    "resolve_conflicts": resolve_conflicts,
}
