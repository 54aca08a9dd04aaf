"""Rolling a consolidation run back to exactly the state before it, in Postgres and Chroma.

For every memory the run touched, the earliest snapshot it wrote is the state before the run:
rows it created (version-0 marker) are deleted, every other row is restored column for column,
vector and version included. A memory changed again after the run (a later run, an approval, a
correction) is a conflict: nothing is restored and the caller is told which memories, because
restoring over a newer change would silently undo it. Rows a user deleted since stay deleted.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from memory.storage import versions
from memory.storage.consolidation_runs import mark_rolled_back, run_rows
from memory.storage.store import MemoryStore
from memory.storage.user_locks import RunBusy, UserLocks
from memory.storage.vector import VectorIndexError
from memory.types import Scope

log = logging.getLogger(__name__)


class RollbackConflict(RuntimeError):
    """Memories the run changed were changed again since; the rollback was refused."""


class UnknownRun(LookupError):
    """No consolidation run has this id."""


@dataclass(slots=True)
class RollbackReport:
    """What a rollback did."""

    run_id: str
    users: int = 0
    restored: int = 0
    deleted: int = 0
    already: list[str] = field(default_factory=list)


async def rollback(
    store: MemoryStore,
    run_id: str,
    *,
    scope: Scope | None = None,
    reason: str = "requested",
    locks: UserLocks | None = None,
) -> RollbackReport:
    """Undo every change run `run_id` made (for one user, or all it touched)."""
    rows = [r for r in await run_rows(store.pool, run_id) if _matches(r, scope)]
    if not rows:
        raise UnknownRun(
            f"no consolidation run {run_id!r}" + (f" for {scope.key}" if scope else "")
        )
    report = RollbackReport(run_id)
    own = locks is None
    locks = locks or UserLocks(store.pool)
    try:
        for row in rows:
            user = Scope(row["tenant_id"], row["user_id"])
            if row["status"] == "rolled_back":
                report.already.append(user.key)
                continue
            if not await locks.try_lock(user):
                raise RunBusy(f"a consolidation run for {user.key} is in progress; retry later")
            restored, deleted = await rollback_user(store, run_id, user, reason)
            report.users += 1
            report.restored += restored
            report.deleted += deleted
    finally:
        if own:
            await locks.close()
    return report


def _matches(row: dict[str, Any], scope: Scope | None) -> bool:
    return scope is None or (row["tenant_id"], row["user_id"]) == (scope.tenant_id, scope.user_id)


async def rollback_user(
    store: MemoryStore, run_id: str, scope: Scope, reason: str
) -> tuple[int, int]:
    """Restore one user's memories (the caller holds the user's lock); (restored, deleted)."""
    async with store.pool.acquire() as conn, conn.transaction():
        first, last = await versions.run_snapshots(conn, run_id, scope)
        current = await versions.current_versions(conn, scope, list(first))
        moved = sorted(m for m, ver in current.items() if ver != last[m] + 1)
        if moved:
            raise RollbackConflict(
                f"run {run_id}: {len(moved)} memories changed after it (e.g. {moved[0]}); roll "
                "back later runs first, or leave this one in place"
            )
        created = [m for m, snap in first.items() if snap.get("created") and m in current]
        restored = [m for m, snap in first.items() if not snap.get("created") and m in current]
        for mid in restored:
            await versions.restore(conn, first[mid])
        await versions.delete_memories(conn, scope, created)
        await versions.drop_run_versions(conn, run_id, scope)
        await mark_rolled_back(conn, run_id, scope, reason)
        detail = {"run_id": run_id, "memories": len(restored) + len(created)}
        await versions.log_event(conn, scope, None, "consolidate_rollback", reason, detail)
        await store.bump_version(conn, scope)
    store.cache.invalidate(scope)
    await _resync_index(store, scope, restored, created)
    return len(restored), len(created)


async def _resync_index(
    store: MemoryStore, scope: Scope, restored: list[str], created: list[str]
) -> None:
    """Chroma again holds exactly the restored rows that were indexed before the run."""
    async with store.pool.acquire() as conn:
        rows = await versions.memory_rows(conn, scope, restored, with_vectors=True)
    indexed = [r for r in rows if r["indexed_at"] is not None and r["status"] != "deleted"]
    absent = set(restored) - {r["id"] for r in indexed}
    try:
        await store.index.delete(scope, [*created, *sorted(absent)])
        if indexed:
            records, vectors = await store.vectors_for(indexed)
            await store.index.upsert(records, vectors)
    except VectorIndexError as exc:
        # Mark them unindexed so `reindex()` puts them back once Chroma answers again.
        log.warning("Chroma unavailable during rollback of %s: %s", scope.key, exc)
        await versions.mark_unindexed(store.pool, scope, [r["id"] for r in indexed])
