"""A run's batch of users: lock, recover, load, step, finish — as one explicit object.

`RunBatch.open` locks each user (skipping busy ones), rolls back their interrupted runs and
loads their working sets; `run_step` runs one step for every user; `close` records the runs
and releases the locks; `abort` rolls every user back and releases them. A batch holds a
database connection (the advisory locks) and each user's records and vectors, so it lives in
this process only. If the process dies, the connection and its locks die with it and the next
run for those users finds their rows 'running' with the lock free: it rolls them back before
doing anything else.

`OpenBatches` keeps open batches by run id for callers whose steps share no Python state: the
consolidate graph runs each step as its own node, and its state is checkpointed to Postgres,
where neither a connection nor the working sets (every memory with its vector) belong.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import TracebackType

from memory.longterm.consolidation.index import flush_index
from memory.longterm.consolidation.rollbacks import rollback, rollback_user
from memory.longterm.consolidation.steps import STEP_FUNCTIONS
from memory.longterm.consolidation.types import StepContext, UserRun
from memory.longterm.profile import refresh_profile
from memory.storage.consolidation_runs import finish_run, stale_runs, start_run
from memory.storage.tombstones import current_epoch, is_forgotten, writing_as
from memory.storage.user_locks import UserLocks
from memory.storage.versions import active_rows
from memory.types import MemoryKind, Scope

log = logging.getLogger(__name__)


class LostRun(RuntimeError):
    """The run's batch is not open in this process (it restarted, or the run was aborted)."""


async def load_working_set(ctx: StepContext, run: UserRun) -> None:
    """Read the user's active memories and their vectors into the run."""
    rows = await active_rows(ctx.store.pool, run.scope)
    records, vectors = await ctx.store.vectors_for(rows)
    run.records = {r.id: r for r in records}
    run.vectors = {r.id: v for r, v in zip(records, vectors, strict=True)}


@dataclass(slots=True)
class RunBatch:
    """The users of one run being consolidated together, from `open` to `close` or `abort`."""

    run_id: str
    ctx: StepContext
    locks: UserLocks
    runs: dict[str, UserRun] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)
    is_open: bool = True
    # Each user's epoch when the run began: a user forgotten meanwhile gets no more writes
    # from this run (`storage.tombstones`), however the steps are scheduled.
    epochs: dict[str, int] = field(default_factory=dict)

    @classmethod
    async def open(
        cls,
        ctx: StepContext,
        run_id: str,
        scopes: Sequence[Scope],
        *,
        now: datetime,
        dry_run: bool,
    ) -> RunBatch:
        """Lock each user (skipping busy ones), roll back their interrupted runs, load them."""
        batch = cls(run_id, ctx, UserLocks(ctx.store.pool))
        # The index connects lazily, and its delete/get calls look the collection up on the
        # event loop: the first connection (blocking HTTP under `langgraph dev`, which refuses
        # it) is made here in a worker thread instead. A Chroma outage is not fatal: Postgres
        # is the record, and `connect` logs it.
        await ctx.store.index.connect()
        try:
            for scope in scopes:
                run = UserRun(run_id, scope, now, dry_run)
                epoch = batch.epochs[scope.key] = await current_epoch(ctx.store.pool, scope)
                with writing_as(scope, epoch):
                    if not dry_run and not await batch._claim(run):
                        continue
                    await load_working_set(ctx, run)
                batch.runs[scope.key] = run
        except BaseException:
            await batch.abort("failed while opening the batch")
            raise
        return batch

    async def _claim(self, run: UserRun) -> bool:
        if not await self.locks.try_lock(run.scope):
            self.skipped.append(run.scope.key)
            return False
        store = self.ctx.store
        for stale in await stale_runs(store.pool, run.scope, run.run_id):
            await rollback(
                store, stale, scope=run.scope, reason="interrupted run", locks=self.locks
            )
            self.recovered.append(stale)
            log.warning("rolled back interrupted consolidation run %s for %s", stale, run.scope.key)
        await start_run(store.pool, run.run_id, run.scope)
        return True

    async def run_step(self, step: str) -> None:
        """Run one step for every user; a user whose step fails is rolled back."""
        if not self.is_open:
            raise LostRun(f"consolidation run {self.run_id}'s batch is closed")
        try:
            for key, run in list(self.runs.items()):
                try:
                    with writing_as(run.scope, self.epochs[key]):
                        await STEP_FUNCTIONS[step](self.ctx, run)
                except Exception as exc:
                    if is_forgotten(exc):  # refused by the tombstone: expected, no traceback
                        log.warning("consolidation step %s refused: %s was forgotten", step, key)
                        await self._fail(run, f"{step}: the user was forgotten during the run")
                        continue
                    log.exception("consolidation step %s failed for %s", step, key)
                    await self._fail(run, f"{step}: {type(exc).__name__}: {exc}")
        except BaseException:  # cancelled: leave nothing half-done behind
            await self.abort(f"cancelled during {step}")
            raise

    async def _fail(self, run: UserRun, error: str) -> None:
        self.runs.pop(run.scope.key, None)
        self.errors.append(f"{run.scope.key}: {error}")
        if run.dry_run:
            return
        store = self.ctx.store
        try:
            with writing_as(run.scope, self.epochs.get(run.scope.key, 0)):
                await rollback_user(store, run.run_id, run.scope, f"failed: {error}")
            await finish_run(store.pool, run.run_id, run.scope, status="rolled_back",
                             counts=run.counts, decisions=_decisions(run), error=error)  # fmt: skip
        except Exception as exc:  # the row stays 'running'; the next run rolls it back
            if is_forgotten(exc):  # nothing of the user is left to roll back
                return
            log.exception("could not roll back failed run %s for %s", run.run_id, run.scope.key)

    async def close(self) -> None:
        """Record each user's run as completed, refresh changed profiles, release the locks."""
        if not self.is_open:
            raise LostRun(f"consolidation run {self.run_id}'s batch is closed")
        self.is_open = False
        store = self.ctx.store
        try:
            for run in self.runs.values():
                if run.dry_run:
                    continue
                try:
                    with writing_as(run.scope, self.epochs.get(run.scope.key, 0)):
                        await flush_index(store, run)
                        decisions = _decisions(run, self.ctx.policy.decisions_kept)
                        await finish_run(store.pool, run.run_id, run.scope, status="completed",
                                         counts=run.counts, decisions=decisions)  # fmt: skip
                        if any(_longterm(run, mid) for mid in run.touched):
                            await refresh_profile(store, run.scope)
                except Exception as exc:
                    if not is_forgotten(exc):
                        raise
                    # Forgotten during the run: its writes were refused; the others go on.
                    self.errors.append(f"{run.scope.key}: forgotten during the run")
                    log.warning("consolidation run %s: a user was forgotten meanwhile", self.run_id)
        finally:
            await self.locks.close()

    async def abort(self, reason: str) -> None:
        """Roll back every user of the open batch and release it (cancellation, fatal errors).

        Does nothing once the batch is closed or aborted.
        """
        if not self.is_open:
            return
        self.is_open = False
        try:
            for run in list(self.runs.values()):
                await self._fail(run, reason)
        finally:
            await self.locks.close()


def _decisions(run: UserRun, keep: int = 1000) -> list[dict[str, object]]:
    return [d.as_dict() for d in run.decisions[:keep]]


def _longterm(run: UserRun, memory_id: str) -> bool:
    record = run.records.get(memory_id)
    return record is None or record.kind is not MemoryKind.EPISODIC


class OpenBatches:
    """The batches open in this process, by run id; an async context manager.

    Leaving the context aborts every batch still open (rolled back, locks released), so a
    batch outlives neither its caller nor the store's pool its lock connection came from.
    """

    def __init__(self) -> None:
        self._batches: dict[str, RunBatch] = {}

    async def open(
        self,
        ctx: StepContext,
        run_id: str,
        scopes: Sequence[Scope],
        *,
        now: datetime,
        dry_run: bool,
    ) -> RunBatch:
        """Open a run's batch (`RunBatch.open`) and keep it under the run id."""
        batch = await RunBatch.open(ctx, run_id, scopes, now=now, dry_run=dry_run)
        self._batches[run_id] = batch
        return batch

    def get(self, run_id: str) -> RunBatch:
        """The open batch of a run, or LostRun."""
        batch = self._batches.get(run_id)
        if batch is None or not batch.is_open:
            raise LostRun(f"consolidation run {run_id} has no open batch in this process")
        return batch

    async def run_step(self, run_id: str, step: str) -> None:
        """Run one step of a run's open batch (an aborted batch is let go)."""
        batch = self.get(run_id)
        try:
            await batch.run_step(step)
        finally:
            if not batch.is_open:
                self._batches.pop(run_id, None)

    async def close(self, run_id: str) -> RunBatch:
        """Close a run's open batch (`RunBatch.close`) and let it go."""
        batch = self.get(run_id)
        try:
            await batch.close()
        finally:
            self._batches.pop(run_id, None)
        return batch

    async def abort(self, run_id: str, reason: str) -> None:
        """Abort a run's batch if it is open here, and let it go."""
        batch = self._batches.pop(run_id, None)
        if batch is not None:
            await batch.abort(reason)

    async def aclose(self) -> None:
        """Abort every batch still open."""
        for run_id in list(self._batches):
            await self.abort(run_id, "the process is shutting down")

    def __len__(self) -> int:
        return len(self._batches)

    async def __aenter__(self) -> OpenBatches:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
