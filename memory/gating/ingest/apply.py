"""Write one memory under the conflict policy: the write path of the agent, the CLI and the bus.

Nothing is ever lost: a loser stays in Postgres as `superseded`, linked to the memory that won,
out of recall (an update also closes its validity window, so questions about the past still
find it: `memory.storage.timeline`); list-like memories are merged into a new version;
`mark_conflict` keeps both active and tagged; every conflict is an audit event on each memory
involved.

Concurrent writes to one user's memory are resolved by the policy, never lost: the write runs
under `user_write_lock`, so two writers of the same slot on two connections are serialised and
the second sees the first; `conflicts.resolve` then decides (last-write-wins, merge,
mark-as-conflict, or the default policy). `write_with_policy` is this path for a memory that did
not come through the gate as a user's statement (an agent's published knowledge, an import).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Literal

from memory.gating.conflicts import Candidate, Existing, Resolution, resolve, resolve_by_reading
from memory.gating.update_model import UpdateReader
from memory.recall.recaller import recaller_for
from memory.recall.temporal import statement_start
from memory.settings import ServiceLimits
from memory.storage.quotas import over_quota, usage
from memory.storage.store import MemoryStore
from memory.storage.timeline import close_windows
from memory.storage.user_locks import user_write_lock
from memory.types import MemoryRecord, NewMemory, Scope, Status

ConflictStrategy = Literal["policy", "last_write_wins", "merge", "mark_conflict"]

DUPLICATE_COSINE = 0.92
NEIGHBOURS = 6


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the write path did."""

    action: str
    memory_id: str | None
    reason: str
    related_ids: tuple[str, ...] = ()


def _existing(record: MemoryRecord, cosine: float) -> Existing:
    return Existing(
        id=record.id,
        content=record.content,
        similarity=cosine,
        origin=record.origin,
        category=record.category,
        created_at=record.created_at,
        pinned=record.pinned,
    )


async def decide(
    store: MemoryStore,
    scope: Scope,
    item: NewMemory,
    strategy: ConflictStrategy,
    *,
    exclude: str | None = None,
) -> Resolution:
    """The conflict policy's verdict for `item` against this user's nearest active memories.

    `exclude` leaves one memory out of the comparison: an edited memory is not its own rival.
    """
    verdict, _ = await _weigh(store, scope, item, strategy, exclude)
    return verdict


@dataclass(frozen=True, slots=True)
class _Read:
    """What a gate model read of an item against the neighbours it was shown, by memory id."""

    replaces: frozenset[str] = frozenset()
    agrees: frozenset[str] = frozenset()
    failed: str = ""


async def _neighbours(
    store: MemoryStore, scope: Scope, item: NewMemory, exclude: str | None = None
) -> list[Existing]:
    similar = await recaller_for(store).similar(
        scope, item.content, k=NEIGHBOURS + (exclude is not None)
    )
    return [_existing(r, cos) for r, cos in similar if r.id != exclude][:NEIGHBOURS]


async def _read(
    store: MemoryStore, scope: Scope, item: NewMemory, reader: UpdateReader
) -> _Read | None:
    """The model's reading of which neighbours `item` replaces, or None with no neighbour."""
    shown = await _neighbours(store, scope, item)
    if not shown:
        return None
    reading = await reader.read(item.content, [e.content for e in shown])
    ids = [e.id for e in shown]
    return _Read(
        frozenset(ids[i] for i in reading.replaces),
        frozenset(ids[i] for i in reading.agrees),
        reading.failed,
    )


async def _weigh(
    store: MemoryStore,
    scope: Scope,
    item: NewMemory,
    strategy: ConflictStrategy,
    exclude: str | None = None,
    read: _Read | None = None,
) -> tuple[Resolution, list[Existing]]:
    """`decide`'s verdict and the neighbours it was reached against (the targets among them).

    With a model's `read`, the model decides what the item replaces among the neighbours it
    saw (`conflicts.resolve_by_reading`); the rules' verdict stands where its call failed.
    """
    existing = await _neighbours(store, scope, item, exclude)
    candidate = Candidate(content=item.content, category=item.category, origin=item.origin)
    # resolve() may embed value words; keep the CPU work off the event loop.
    verdict = await asyncio.to_thread(
        resolve,
        candidate,
        existing,
        dup_threshold=DUPLICATE_COSINE,
        strategy=strategy,
        embed=store.embedder.embed,
        to_reference=None if store.scale.identity else store.scale.one,
    )
    if read is None:
        return verdict, existing
    if read.failed:
        return replace(verdict, reason=f"update reading: {read.failed}; {verdict.reason}"), existing
    by_model = resolve_by_reading(
        candidate,
        existing,
        verdict,
        frozenset(i for i, e in enumerate(existing) if e.id in read.replaces),
        frozenset(i for i, e in enumerate(existing) if e.id in read.agrees),
        strategy=strategy,
    )
    return by_model, existing


async def apply_resolution(
    store: MemoryStore,
    scope: Scope,
    item: NewMemory,
    strategy: ConflictStrategy,
    *,
    reason: str,
    lifetime_asked: bool = False,
    reader: UpdateReader | None = None,
) -> Outcome:
    """Insert, reinforce a near-duplicate, supersede, merge, reject or flag, then audit.

    `reason` (the gate's, usually) is recorded when the memory is stored as it is. A memory
    that replaces an earlier value holds until it is replaced in turn: the gate's default
    lifetime is dropped from it, a lifetime the caller asked for (`lifetime_asked`) is kept.
    With a `reader` (the gate model) the model reads what the memory replaces.

    Runs under the user's write lock (across processes): a concurrent writer of the same user
    waits, then sees this write, so the conflict policy decides instead of a race.
    """
    read = None
    if reader is not None and item.status is not Status.PENDING_APPROVAL:
        # Asked before the lock: a model call takes seconds, and the lock holds a pooled
        # connection and every other write of this user. What it read is applied by memory
        # id to the neighbours found under the lock.
        read = await _read(store, scope, item, reader)
        if read is not None and read.failed:
            reason = f"{reason}; update reading: {read.failed}"
    async with user_write_lock(store.pool, scope):
        full = await _over_quota(store, scope, item)
        if full is not None:
            # Under the user's lock, so concurrent writers cannot both take the last place. The
            # turn goes on: the memory is dropped with an audited reason, as the gate drops.
            await store.record_event(scope, None, "gate_drop", full, {"via": "quota"})
            return Outcome("dropped", None, full)
        return await _apply(store, scope, item, strategy, reason, lifetime_asked, read)


async def _over_quota(store: MemoryStore, scope: Scope, item: NewMemory) -> str | None:
    limits = ServiceLimits.from_env()
    if not limits.serves_users() or (limits.max_memories is None and limits.max_bytes is None):
        return None
    adding = len((item.content + item.context).encode("utf-8", "replace"))
    return over_quota(await usage(store.pool, scope), limits.max_memories, limits.max_bytes, adding)


async def write_with_policy(
    store: MemoryStore,
    scope: Scope,
    item: NewMemory,
    *,
    strategy: ConflictStrategy = "policy",
    reason: str = "",
) -> Outcome:
    """Write `item` for the user, resolved against their similar memories under the user lock."""
    return await apply_resolution(store, scope, item, strategy, reason=reason or "stored")


async def _apply(
    store: MemoryStore,
    scope: Scope,
    item: NewMemory,
    strategy: ConflictStrategy,
    reason: str,
    lifetime_asked: bool = False,
    read: _Read | None = None,
) -> Outcome:
    if item.status is Status.PENDING_APPROVAL:
        written = await store.write(scope, item, reason=reason)
        return Outcome("pending_approval", written.id, reason)
    verdict, neighbours = await _weigh(store, scope, item, strategy, read=read)
    targets = verdict.target_ids
    if verdict.action == "update_existing":
        await store.reinforce(scope, targets[0], reason=verdict.reason)
        return Outcome("reinforced", targets[0], verdict.reason, targets)
    if verdict.action == "insert":
        written = await store.write(scope, item, reason=reason)
        return Outcome("stored", written.id, reason)
    said = {e.id: e.content for e in neighbours}
    return await _conflict(store, scope, item, verdict, lifetime_asked, said)


def _with_replaced_context(item: NewMemory, replaced: Sequence[str]) -> NewMemory:
    """`item` with the value it replaces ahead of its context.

    A new value often leaves its topic unsaid ("Yusuf retired, so I go to Marta at Fade Lab
    now" after "My barber is Yusuf"): read alone, a question about the topic ("who cuts my
    hair?") finds neither. Context is what recall reads a memory's topic from beside its own
    words (its context-bearing vector, its words at half weight); it is not shown as the
    memory's text.
    """
    said = " ".join(text for text in replaced if text not in item.context)
    if not said:
        return item
    return replace(item, context=f"{said}\n{item.context}" if item.context else said)


async def supersede(
    store: MemoryStore, scope: Scope, targets: Sequence[str], by: str, why: str, *, merged: bool
) -> None:
    """Mark `targets` superseded by memory `by` (kept, out of recall, linked to their successor)."""
    for target in targets:
        await store.set_status(
            scope,
            target,
            Status.SUPERSEDED,
            reason=why,
            superseded_by=by,
            event="merge" if merged else "supersede",
        )


async def _conflict(
    store: MemoryStore,
    scope: Scope,
    item: NewMemory,
    verdict: Resolution,
    lifetime_asked: bool,
    said: Mapping[str, str],
) -> Outcome:
    """Apply a verdict that touches other memories; `said` holds each neighbour's content."""
    targets, why = verdict.target_ids, verdict.reason
    if verdict.action == "reject":
        # The incoming statement loses but is kept, superseded by the memory that won.
        lost = await store.write(scope, replace(item, status=Status.SUPERSEDED), reason=why)
        await store.set_status(
            scope,
            lost.id,
            Status.SUPERSEDED,
            reason=why,
            superseded_by=targets[0],
            event="conflict",
        )
        return Outcome("rejected", lost.id, why, targets)
    if verdict.action == "mark_conflict":
        tagged = replace(item, tags=[*item.tags, "conflict"])
        written = await store.write(scope, tagged, reason=why)
        for target in targets:
            await store.record_event(scope, target, "conflict", why, {"with": written.id})
        await store.record_event(scope, written.id, "conflict", why, {"with": list(targets)})
        return Outcome("conflict", written.id, why, targets)
    content = verdict.merged_content if verdict.action == "merge" else None
    winner = replace(item, content=content) if content else item
    trusted = item.provenance.get("trust") != "low"
    if verdict.action == "supersede" and verdict.conflict and trusted and not lifetime_asked:
        # The newest value of something the user stated holds until an update replaces it,
        # not for its category's default lifetime (a decision's, or a fact's where a policy
        # gives facts one). Text the screen flagged keeps its short one.
        winner = replace(winner, ttl_days=None)
    if verdict.action == "supersede" and verdict.conflict:
        winner = _with_replaced_context(winner, [said[t] for t in targets if t in said])
    written = await store.write(scope, winner, reason=why)
    await supersede(store, scope, targets, written.id, why, merged=verdict.action == "merge")
    if verdict.action == "supersede" and verdict.conflict:
        # An update: the new value holds from its own time words, else from when it was said.
        start = statement_start(item.content, item.occurred_at or datetime.now(UTC))
        await close_windows(store, scope, written.id, targets, start)
    if verdict.conflict:
        await store.record_event(scope, written.id, "conflict", why, {"replaced": list(targets)})
    action = "merged" if verdict.action == "merge" else "superseded"
    return Outcome(action, written.id, why, targets)
