"""A run's batch of users: lock, recover, load, step, finish, all keyed by run id.

The consolidate graph runs one node per step; a node cannot carry a database connection in its
state, so the open batch (the lock connection and each user's working set) lives in this
process's registry under the run id. If the process dies, the connection and its locks die
with it and the next run for those users finds their rows 'running' with the lock free: it
rolls them back before doing anything else.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from memory.longterm.consolidation.index import flush_index
from memory.longterm.consolidation.rollback import rollback, rollback_user
from memory.longterm.consolidation.steps import STEP_FUNCTIONS
from memory.longterm.consolidation.store import UserLocks, finish_run, stale_runs, start_run
from memory.longterm.consolidation.types import StepContext, UserRun
from memory.longterm.profile import refresh_profile
from memory.storage.rows import RECORD_COLUMNS
from memory.storage.vector import LAYERS
from memory.types import MemoryKind, Scope

log = logging.getLogger(__name__)


class LostRun(RuntimeError):
    """The run's batch is not open in this process (it restarted, or the run was aborted)."""


@dataclass(slots=True)
class RunBatch:
    """The users of one run being consolidated together."""

    run_id: str
    ctx: StepContext
    locks: UserLocks
    runs: dict[str, UserRun] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)


_BATCHES: dict[str, RunBatch] = {}


async def load_working_set(ctx: StepContext, run: UserRun) -> None:
    """Read the user's active memories and their vectors into the run."""
    async with ctx.store.pool.acquire() as conn:
        rows = await conn.fetch(
            f"SELECT {RECORD_COLUMNS}, embedding FROM memories"
            " WHERE tenant_id = $1 AND user_id = $2 AND status = 'active'",
            run.scope.tenant_id, run.scope.user_id,
        )  # fmt: skip
    records, vectors = await ctx.store._vectors_for(rows)
    run.records = {r.id: r for r in records}
    run.vectors = {r.id: v for r, v in zip(records, vectors, strict=True)}


async def _connect_index(ctx: StepContext) -> None:
    # VectorIndex connects lazily, and its delete/get calls look the collection up on the event
    # loop: the first connection (blocking HTTP under `langgraph dev`, which refuses it) is made
    # here in a worker thread instead. A Chroma outage is not fatal: Postgres is the record.
    index = ctx.store.index
    try:
        await asyncio.to_thread(lambda: [index._collection(layer) for layer in LAYERS])
    except Exception as exc:
        index._forget_client()
        log.warning("Chroma unavailable at the start of consolidation: %s", exc)


async def open_batch(
    ctx: StepContext, run_id: str, scopes: Sequence[Scope], *, now: datetime, dry_run: bool
) -> RunBatch:
    """Lock each user (skipping busy ones), roll back their interrupted runs, load them."""
    batch = RunBatch(run_id, ctx, UserLocks(ctx.store.pool))
    _BATCHES[run_id] = batch
    await _connect_index(ctx)
    try:
        for scope in scopes:
            run = UserRun(run_id, scope, now, dry_run)
            if not dry_run and not await _claim(batch, run):
                continue
            await load_working_set(ctx, run)
            batch.runs[scope.key] = run
    except BaseException:
        await abort_batch(run_id, "failed while opening the batch")
        raise
    return batch


async def _claim(batch: RunBatch, run: UserRun) -> bool:
    if not await batch.locks.try_lock(run.scope):
        batch.skipped.append(run.scope.key)
        return False
    store = batch.ctx.store
    for stale in await stale_runs(store.pool, run.scope, run.run_id):
        await rollback(store, stale, scope=run.scope, reason="interrupted run", locks=batch.locks)
        batch.recovered.append(stale)
        log.warning("rolled back interrupted consolidation run %s for %s", stale, run.scope.key)
    await start_run(store.pool, run)
    return True


def get_batch(run_id: str) -> RunBatch:
    """The open batch of a run, or LostRun."""
    batch = _BATCHES.get(run_id)
    if batch is None:
        raise LostRun(f"consolidation run {run_id} has no open batch in this process")
    return batch


async def run_step(run_id: str, step: str) -> None:
    """Run one step for every user of the batch; a user whose step fails is rolled back."""
    batch = get_batch(run_id)
    try:
        for key, run in list(batch.runs.items()):
            try:
                await STEP_FUNCTIONS[step](batch.ctx, run)
            except Exception as exc:
                log.exception("consolidation step %s failed for %s", step, key)
                await _fail(batch, run, f"{step}: {type(exc).__name__}: {exc}")
    except BaseException:  # cancelled: leave nothing half-done behind
        await abort_batch(run_id, f"cancelled during {step}")
        raise


async def _fail(batch: RunBatch, run: UserRun, error: str) -> None:
    batch.runs.pop(run.scope.key, None)
    batch.errors.append(f"{run.scope.key}: {error}")
    if run.dry_run:
        return
    try:
        await rollback_user(batch.ctx.store, run.run_id, run.scope, f"failed: {error}")
        await finish_run(batch.ctx.store.pool, run, status="rolled_back", error=error)
    except Exception:  # the row stays 'running'; the next run rolls it back
        log.exception("could not roll back failed run %s for %s", run.run_id, run.scope.key)


async def close_batch(run_id: str) -> RunBatch:
    """Record each user's run as completed, refresh changed profiles, release the locks."""
    batch = get_batch(run_id)
    try:
        for run in batch.runs.values():
            if run.dry_run:
                continue
            await flush_index(batch.ctx.store, run)
            await finish_run(batch.ctx.store.pool, run, status="completed",
                             keep=batch.ctx.policy.decisions_kept)  # fmt: skip
            if any(_longterm(run, mid) for mid in run.touched):
                await refresh_profile(batch.ctx.store, run.scope)
    finally:
        await batch.locks.close()
        _BATCHES.pop(run_id, None)
    return batch


def _longterm(run: UserRun, memory_id: str) -> bool:
    record = run.records.get(memory_id)
    return record is None or record.kind is not MemoryKind.EPISODIC


async def abort_batch(run_id: str, reason: str) -> None:
    """Roll back every user of an open batch and release it (cancellation, fatal errors)."""
    batch = _BATCHES.pop(run_id, None)
    if batch is None:
        return
    try:
        for run in list(batch.runs.values()):
            await _fail(batch, run, reason)
    finally:
        await batch.locks.close()
