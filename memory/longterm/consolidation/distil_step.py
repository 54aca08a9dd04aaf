"""The distil step: turn each stable theme into one long-term memory (or reinforce one).

A promoted theme becomes a new PREFERENCE / PROCEDURAL / SEMANTIC memory (origin LEARNED,
source CONSOLIDATION) unless an active long-term memory already says the same (cosine ≥ the
reinforce threshold, same polarity): then that one gains confidence instead of getting a twin.
Either way the episodes it was distilled from are superseded by it: kept, linked, out of
recall. A theme that is not promoted stays episodic, and the reason is recorded.
"""

from __future__ import annotations

import asyncio

import numpy as np

from memory.longterm.consolidation.agreement import is_negative
from memory.longterm.consolidation.cluster import centroid, normalise_rows
from memory.longterm.consolidation.distil import Distillation, confidence_from, distil
from memory.longterm.consolidation.model import distil_with_model
from memory.longterm.consolidation.types import Decision, StepContext, UserRun
from memory.longterm.consolidation.versions import Change, Insert, apply
from memory.storage.rows import new_id
from memory.types import MemoryKind, MemoryRecord, NewMemory, Origin, Source, Status


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
        verdict = await asyncio.to_thread(distil, members, vectors, ctx.policy, embed)
    else:
        verdict = distil(members, vectors, ctx.policy)
    if ctx.model is not None and eligible:
        # The model only sees themes with enough support: one call per theme, not per pair.
        return await distil_with_model(ctx.model, members, verdict)
    return verdict


def _twin(run: UserRun, members: list[MemoryRecord], verdict: Distillation, threshold: float
          ) -> tuple[MemoryRecord, float] | None:  # fmt: skip
    """An active long-term memory that already states this theme, if any."""
    longterm = run.active(episodic=False)
    if not longterm:
        return None
    direction = centroid(np.vstack([run.vectors[r.id] for r in members]))
    sims = normalise_rows(np.vstack([run.vectors[r.id] for r in longterm])) @ direction
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
    twin = _twin(run, members, verdict, ctx.policy.reinforce_threshold)
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
    return 1 if inserts else 0


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
