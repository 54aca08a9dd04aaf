"""The resolve_conflicts step: the gate's conflict policy applied to what this run changed.

Every long-term memory the run created or changed is checked, as the incoming statement,
against the user's other active long-term memories that resemble it (`memory.gating.conflicts`):
explicit > learned > inferred, a newer statement beats an older one of equal standing, pinned
rules are never overridden, list-like memories are merged, ambiguous cases are marked and left
for a person. Losers are superseded (kept, linked, out of recall); every conflict is audited.
"""

from __future__ import annotations

import asyncio

import numpy as np

from memory.gating.conflicts import Candidate, Existing, Resolution, resolve
from memory.longterm.consolidation.cluster import normalise_rows
from memory.longterm.consolidation.merge import survivor_key
from memory.longterm.consolidation.types import Decision, StepContext, UserRun
from memory.longterm.consolidation.versions import Change, Insert, apply
from memory.storage.rows import new_id
from memory.types import MemoryRecord, NewMemory, Source, Status

STEP = "resolve_conflicts"


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
        )  # fmt: skip
        handled += await _apply(ctx, run, record, resolution)
    return handled


def _neighbours(ctx: StepContext, run: UserRun, record: MemoryRecord) -> list[Existing]:
    others = [r for r in run.active(episodic=False) if r.id != record.id]
    if not others:
        return []
    vector = normalise_rows(run.vectors[record.id][None, :])[0]
    sims = normalise_rows(np.vstack([run.vectors[r.id] for r in others])) @ vector
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


def _supersede(record_id: str, winner: str, reason: str) -> Change:
    return Change(STEP, "supersede", record_id, reason, status=Status.SUPERSEDED,
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
        inserts.append(Insert(STEP, merged[0], merged[1], why, (record.id, targets[0].id)))
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
    run.decisions.append(Decision(STEP, "mark_conflict", record.id, why, related))
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
