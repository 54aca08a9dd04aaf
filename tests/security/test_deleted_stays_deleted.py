"""A memory the user deletes never comes back through a write that was planned before it.

Real Postgres, real (embedded) Chroma, the real embedding model. A consolidation run loads the
user's memories when it opens and writes minutes later; a turn's write reads its neighbours and
then writes a merge. A single delete (`DELETE /memory/memories/{id}`, `forget_one`) that lands
in between must not be undone: the run re-checks, under row locks, every memory a new row is
made from, and a delete waits for a turn write that holds the user.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest

from memory.gating.ingest import apply as ingest_apply
from memory.gating.ingest.apply import write_with_policy
from memory.longterm.consolidation import ConsolidationPolicy, OpenBatches, StepContext
from memory.longterm.consolidation.versions import Change, Insert, apply
from memory.storage.forget_one import delete_memory
from memory.storage.rows import new_id
from memory.storage.store import MemoryStore
from memory.types import Category, MemoryKind, NewMemory, Origin, Scope, Source, Status
from tests.integration.test_consolidation import ALICE, TS_EPISODES, _seed_preference, store

__all__ = ["store"]


async def _active_texts(store: MemoryStore, scope: Scope) -> list[str]:
    active = await store.list_memories(scope, statuses=[Status.ACTIVE.value])
    return [m.content for m in active]


async def test_deleted_during_a_run_is_not_distilled_back(store: MemoryStore) -> None:
    ids = await _seed_preference(store)
    episodes = ids[:5]
    async with OpenBatches() as batches:
        ctx = StepContext(store, ConsolidationPolicy(), None)
        batch = await batches.open(ctx, "race-run", [ALICE], now=datetime.now(UTC), dry_run=False)
        for step in ("expire", "decay_cleanup", "cluster"):
            await batches.run_step("race-run", step)
        assert batch.runs[ALICE.key].clusters, "the theme was clustered before the deletes"
        for mid in episodes:
            receipt = await delete_memory(store, ALICE, mid, reason="deleted via API")
            assert receipt["memories"] == 1
        for step in ("distil", "merge_duplicates", "resolve_conflicts"):
            await batches.run_step("race-run", step)
        run = batch.runs[ALICE.key]
        await batches.close("race-run")
    texts = await _active_texts(store, ALICE)
    assert not set(texts) & set(TS_EPISODES), texts
    assert await store.list_memories(ALICE, kinds=[MemoryKind.PREFERENCE]) == []
    for mid in episodes:
        assert await store.get(ALICE, mid) is None  # the receipts stay true
    skipped = [d for d in run.decisions if d.action == "skipped"]
    assert skipped and run.counts.get("promoted", 0) == 0


async def test_one_member_deleted_during_a_run_stops_the_distillation(store: MemoryStore) -> None:
    ids = await _seed_preference(store)
    async with OpenBatches() as batches:
        ctx = StepContext(store, ConsolidationPolicy(), None)
        await batches.open(ctx, "race-one", [ALICE], now=datetime.now(UTC), dry_run=False)
        for step in ("expire", "decay_cleanup", "cluster"):
            await batches.run_step("race-one", step)
        await delete_memory(store, ALICE, ids[0], reason="deleted via API")
        for step in ("distil", "merge_duplicates", "resolve_conflicts"):
            await batches.run_step("race-one", step)
        await batches.close("race-one")
    active = await store.list_memories(ALICE, statuses=[Status.ACTIVE.value])
    assert TS_EPISODES[0] not in [m.content for m in active]
    for m in active:  # nothing active names the deleted memory as its source
        assert ids[0] not in m.provenance.get("evidence", [])
    # The members left are untouched (still active, not superseded into a skipped row).
    for mid in ids[1:5]:
        kept = await store.get(ALICE, mid)
        assert kept is not None and kept.status is Status.ACTIVE and kept.superseded_by is None


def _longterm(text: str) -> NewMemory:
    return NewMemory(text, kind=MemoryKind.PREFERENCE, category=Category.PREFERENCE,
                     origin=Origin.EXPLICIT, source=Source.CHAT)  # fmt: skip


async def test_a_merge_made_from_a_deleted_memory_is_not_inserted(store: MemoryStore) -> None:
    # resolve_conflicts' merge: a new row made from two memories, which it supersedes.
    first, second = await store.write_many(
        ALICE, [_longterm("I like hiking"), _longterm("I like kayaking")]
    )
    async with OpenBatches() as batches:
        ctx = StepContext(store, ConsolidationPolicy(), None)
        batch = await batches.open(ctx, "race-merge", [ALICE], now=datetime.now(UTC),
                                   dry_run=False)  # fmt: skip
        run = batch.runs[ALICE.key]
        await delete_memory(store, ALICE, first.id, reason="deleted via API")
        merged_id = new_id()
        merged = NewMemory("I like hiking and kayaking", kind=MemoryKind.PREFERENCE,
                           category=Category.PREFERENCE, source=Source.CONSOLIDATION,
                           provenance={"merged_from": [first.id, second.id]})  # fmt: skip
        inserts = [Insert("resolve_conflicts", merged_id, merged, "merge",
                          (first.id, second.id))]  # fmt: skip
        changes = [
            Change(
                "resolve_conflicts",
                "supersede",
                mid,
                "merge",
                status=Status.SUPERSEDED,
                superseded_by=merged_id,
                related=(merged_id,),
            )  # fmt: skip
            for mid in (first.id, second.id)
        ]
        assert await apply(store, run, changes, inserts) == 0
        assert first.id not in run.records  # later steps no longer plan on it
        await batches.close("race-merge")
    assert await store.get(ALICE, merged_id) is None
    kept = await store.get(ALICE, second.id)
    assert kept is not None and kept.status is Status.ACTIVE
    assert await _active_texts(store, ALICE) == ["I like kayaking"]


async def test_a_delete_waits_for_the_turn_write_that_read_the_memory(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The turn path reads its neighbours under the user's write lock, then writes a merge.

    A delete of a neighbour issued in between is applied after that write (never before it,
    which would let the merge write the deleted text as a new memory afterwards).
    """
    target = await store.write(ALICE, _longterm("My favourite fruits are apples"), reason="t")
    order: list[str] = []
    real_weigh = ingest_apply._weigh
    deleting: list[asyncio.Task[dict[str, int]]] = []

    async def weigh_then_delete(*args: Any, **kwargs: Any) -> Any:
        verdict = await real_weigh(*args, **kwargs)

        async def delete() -> dict[str, int]:
            receipt = await delete_memory(store, ALICE, target.id, reason="deleted via API")
            order.append("deleted")
            return receipt

        deleting.append(asyncio.create_task(delete()))
        await asyncio.sleep(1.0)  # ample time for an unserialised delete to finish first
        order.append("weighed")
        return verdict

    monkeypatch.setattr(ingest_apply, "_weigh", weigh_then_delete)
    outcome = await write_with_policy(
        store, ALICE, _longterm("My favourite fruits are pears"), strategy="merge"
    )
    receipt = await deleting[0]
    assert order == ["weighed", "deleted"], order
    assert receipt["memories"] == 1 and await store.get(ALICE, target.id) is None
    # The write saw the memory and superseded it before the delete removed it.
    assert outcome.memory_id is not None and target.id in outcome.related_ids
