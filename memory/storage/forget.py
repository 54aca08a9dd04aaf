"""Forget me: delete everything of one user from Postgres, Chroma and their checkpoints.

What goes, in one Postgres transaction: every row of every table keyed by `tenant_id` +
`user_id` (memories, their versions, the audit log, profile and consent, thread ownership, cache
versions, and any table a later migration adds with those two columns), and the checkpoints of
the user's threads (`checkpoints`, `checkpoint_blobs`, `checkpoint_writes`: the working memory,
rolling summaries and task state live there), plus the threads the server's checkpoints name
the user as owner of. The same transaction records in the deletion outbox what must go
elsewhere: the user's Chroma entries and the LangGraph server's own thread records (which only a
running server can delete: `POST /memory/forget` does it at once, after the CLI the server does
it on its next thread request). Then the tables are vacuumed, the Chroma entries deleted and the
deleted texts blanked in Chroma's write-ahead log. The receipt counts what each store held, names
what is still pending, and what no deletion can reach. Running it again is safe.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import asyncpg

from memory.storage.cache_sync import CACHE_CHANNEL
from memory.storage.db import Connection
from memory.storage.deletion_outbox import CHROMA_TARGETS, enqueue, pending_targets
from memory.storage.forget_one import delete_copies
from memory.storage.store import MemoryStore
from memory.storage.threads import others_threads
from memory.storage.tombstones import DERIVED_FROM, bury_threads, seal, tombstone
from memory.storage.vector import VectorIndexError
from memory.storage.vector_log import log_file, purge_log
from memory.types import Scope

log = logging.getLogger(__name__)

# Known tables first, children before parents; discovered ones follow in name order.
_SCOPED_ORDER = ("memory_events", "memory_versions", "memory_images", "memories",
                 "user_settings", "user_threads", "scope_versions")  # fmt: skip
_DEADLOCK_TRIES = 3
CHECKPOINT_TABLES = ("checkpoint_writes", "checkpoint_blobs", "checkpoints")


OUT_OF_REACH = (
    "Postgres data files: VACUUM marks the deleted rows' space free for reuse, but their bytes "
    "stay in the table and index pages until new rows overwrite them (only VACUUM FULL, which "
    "locks the whole table, rewrites them)",
    "Postgres write-ahead log: the segments written since the last checkpoint hold the deleted "
    "rows (and the writes that created them) until they are recycled; so do WAL archives, "
    "streaming replicas' WAL and logical-replication slots",
    "the operator's base backups, PITR archives and database or Chroma snapshots taken before "
    "this deletion: a restore brings the user back (forget again after any restore)",
    "logs and traces outside this project (the LangGraph server's own log, LangSmith if enabled)",
)
NOT_CHECKPOINTED = (
    "the WAL segments still in use: this database role may not run CHECKPOINT (superuser or "
    "pg_checkpoint), so they are recycled only after the server's next scheduled checkpoint"
)
"""What a deletion cannot reach; every receipt says so."""


class ForgetIncompleteError(RuntimeError):
    """Postgres was cleared but Chroma could not be: the rest is queued and retried."""

    def __init__(self, receipt: Receipt, cause: Exception) -> None:
        """Keep the partial receipt for the caller."""
        super().__init__(
            f"Chroma entries not removed yet ({cause}); queued and retried automatically when "
            "Chroma answers (or run forget again)"
        )
        self.receipt = receipt


@dataclass(slots=True)
class Receipt:
    """What a deletion removed, per store (`postgres.<table>`, `checkpoints.<table>`, `chroma`)."""

    tenant_id: str
    user_id: str
    counts: dict[str, int] = field(default_factory=dict)
    threads: list[str] = field(default_factory=list)
    completed_at: datetime | None = None
    pending: list[str] = field(default_factory=list)
    unreachable: list[str] = field(default_factory=lambda: list(OUT_OF_REACH))
    vacuumed: list[str] = field(default_factory=list)
    chroma_log_blanked: int | None = None  # entries of Chroma's write-ahead log emptied
    checkpointed: bool = False  # a CHECKPOINT ran after the VACUUM (WAL segments recyclable)
    # The files' compaction (`_compact`): "done" before this receipt (`vacuumed`, `checkpointed`
    # say what ran), "deferred" to a pass within `compaction_within_s`, "none" when nothing was
    # removed.
    compaction: str = "none"
    compaction_within_s: float | None = None
    epoch: int = 0  # the user's epoch from now on: writers that started before are refused

    @property
    def total(self) -> int:
        """Rows and entries removed in all stores."""
        return sum(self.counts.values())

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (what the CLI prints and the HTTP route returns)."""
        return {
            "tenant_id": self.tenant_id,
            "user_id": self.user_id,
            "counts": dict(sorted(self.counts.items())),
            "total": self.total,
            "threads": len(self.threads),
            "completed_at": self.completed_at.isoformat() if self.completed_at else None,
            "pending": list(self.pending),
            "vacuumed": list(self.vacuumed),
            "chroma_log_blanked": self.chroma_log_blanked,
            "checkpointed": self.checkpointed,
            "compaction": self.compaction,
            "compaction_within_s": self.compaction_within_s,
            "epoch": self.epoch,
            "unreachable": list(self.unreachable),
        }


async def scoped_tables(conn: Connection) -> list[str]:
    """Tables of the current schema that carry both `tenant_id` and `user_id`, in delete order."""
    rows = await conn.fetch(
        "SELECT c.table_name FROM information_schema.columns c"
        " JOIN information_schema.tables t"
        "   ON t.table_schema = c.table_schema AND t.table_name = c.table_name"
        " WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'"
        "   AND c.column_name IN ('tenant_id', 'user_id')"
        " GROUP BY c.table_name HAVING count(*) = 2"
    )
    found = {r["table_name"] for r in rows}
    known = [t for t in _SCOPED_ORDER if t in found]
    return known + sorted(found - set(known))


async def _existing(conn: Connection, tables: Iterable[str]) -> list[str]:
    return [t for t in tables if await conn.fetchval("SELECT to_regclass($1)", t) is not None]


def _count(status: str) -> int:
    # asyncpg returns the command tag, e.g. "DELETE 3".
    return int(status.split()[-1])


async def _delete_rows(
    conn: Connection, scope: Scope, threads: list[str], receipt: Receipt
) -> None:
    if threads:
        for table in await _existing(conn, CHECKPOINT_TABLES):
            status = await conn.execute(
                f'DELETE FROM "{table}" WHERE thread_id = ANY($1::text[])', threads
            )
            receipt.counts[f"checkpoints.{table}"] = _count(status)
    for table in await scoped_tables(conn):
        status = await conn.execute(
            f'DELETE FROM "{table}" WHERE tenant_id = $1 AND user_id = $2',
            scope.tenant_id,
            scope.user_id,
        )
        receipt.counts[f"postgres.{table}"] = _count(status)


async def user_thread_ids(store: MemoryStore, scope: Scope) -> list[str]:
    """The threads recorded as this user's (`user_threads`) and not since taken by another."""
    async with store.pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT thread_id FROM user_threads WHERE tenant_id = $1 AND user_id = $2"
            " ORDER BY first_seen",
            scope.tenant_id,
            scope.user_id,
        )
        ids = [r["thread_id"] for r in rows]
        taken = await others_threads(conn, scope, ids)
    return [i for i in ids if i not in taken]


async def _owned_checkpoint_threads(conn: Connection, scope: Scope) -> set[str]:
    """Threads whose checkpoints the server stamped with this owner.

    A turn that failed before its gate ran left a thread that `user_threads` does not list.
    """
    if await conn.fetchval("SELECT to_regclass('checkpoints')") is None:
        return set()
    rows = await conn.fetch(
        "SELECT DISTINCT thread_id FROM checkpoints"
        " WHERE metadata->>'owner' = $2 AND metadata->>'tenant_id' = $1",
        scope.tenant_id,
        scope.user_id,
    )
    return {r["thread_id"] for r in rows}


async def _compact(store: MemoryStore, receipt: Receipt, *, chroma: bool) -> None:
    """Ask for the compaction the deletion owes: none when it removed nothing, else coalesced.

    The rows are gone already, in the transaction above; what is left is the files' space
    (`storage.compaction`): a forget that removed nothing (the same forget sent again, or a
    user never seen) costs the server no VACUUM or CHECKPOINT, and a flood of forgets at most
    one pass per interval.
    """
    # Postgres tables only ("postgres.memories", "checkpoints.checkpoints", ...; not "chroma").
    tables = dict.fromkeys(k.split(".", 1)[1] for k, n in receipt.counts.items() if n and "." in k)
    if not tables and not chroma:
        receipt.compaction = "none"
        return
    done = await store.compaction.request(tables, chroma=chroma)
    if done is None:
        receipt.compaction = "deferred"
        receipt.compaction_within_s = store.compaction.interval_s
        return
    receipt.compaction = "done"
    receipt.vacuumed, receipt.checkpointed = done.vacuumed, done.checkpointed
    if tables and not done.checkpointed:
        receipt.unreachable.append(NOT_CHECKPOINTED)


async def _forget_derived(store: MemoryStore, scope: Scope, receipt: Receipt) -> None:
    """Delete what other scopes of the tenant keep of this user (shared agent knowledge)."""
    events, removed = await delete_copies(
        store, scope, memory_id=None, reason="its source user was forgotten"
    )
    for key, n in (("derived.agent_events", events), ("derived.memories", removed)):
        receipt.counts[key] = receipt.counts.get(key, 0) + n


async def _forget_rows(
    store: MemoryStore, scope: Scope, receipt: Receipt, extra_threads: Iterable[str]
) -> list[str]:
    """The one Postgres transaction: tombstone first, then every row; the memory ids deleted."""
    async with store.pool.acquire() as conn, conn.transaction():
        # First: from here on writers of this user wait, and once this commits, every writer
        # that started before is refused (`storage.tombstones`).
        receipt.epoch = await tombstone(conn, scope)
        recorded = await conn.fetch(
            "SELECT thread_id FROM user_threads WHERE tenant_id = $1 AND user_id = $2",
            scope.tenant_id,
            scope.user_id,
        )
        found = {r["thread_id"] for r in recorded} | await _owned_checkpoint_threads(conn, scope)
        found |= {str(t) for t in extra_threads}
        threads = sorted(found - await others_threads(conn, scope, sorted(found)))
        receipt.threads = threads
        # Before their checkpoints go: a turn still running on another worker cannot write
        # them back (its checkpoint writes wait for this transaction, then are refused).
        await bury_threads(conn, threads)
        memory_ids = [
            r["id"]
            for r in await conn.fetch(
                "SELECT id FROM memories WHERE tenant_id = $1 AND user_id = $2",
                scope.tenant_id,
                scope.user_id,
            )
        ]
        await _delete_rows(conn, scope, threads, receipt)
        # Owed in the same transaction: nothing is lost if this process dies right after.
        await enqueue(conn, "chroma_ids", memory_ids, scope)
        await enqueue(conn, "chroma_scope", [""], scope)
        await enqueue(conn, "server_thread", threads, scope)
        # Tell every process the user is gone, at commit, even one who never had a memory or
        # a setting (whose deletion fires no trigger): processes that remember having
        # recorded this user's threads must record them again if the user talks on.
        await conn.execute(
            "SELECT pg_notify($1, $2)", CACHE_CHANNEL, f"{scope.tenant_id}/{scope.user_id}/-"
        )
        await seal(conn, scope)
    return memory_ids


async def forget_user(
    store: MemoryStore, scope: Scope, *, extra_threads: Iterable[str] = ()
) -> Receipt:
    """Delete everything of `scope` and return the receipt.

    `extra_threads` adds thread ids the caller knows belong to the user (e.g. the LangGraph
    server's own thread registry) to those recorded in `user_threads`. Checkpoints are deleted
    from the store's database, where `agent.checkpointer` keeps them.
    """
    receipt = Receipt(scope.tenant_id, scope.user_id)
    await store.drain()  # access statistics still in flight would re-create audit rows
    # Copies first: if this process dies in between, the user is still there and forgetting
    # again finishes the job; the other order would orphan copies nothing points back to.
    await _forget_derived(store, scope, receipt)
    derived = dict(receipt.counts)
    for attempt in range(_DEADLOCK_TRIES):
        try:
            memory_ids = await _forget_rows(store, scope, receipt, extra_threads)
            break
        except asyncpg.DeadlockDetectedError:
            # A writer that locked rows before reaching its guard: Postgres aborted one of the
            # two; the forget's transaction rolled back whole and runs again.
            if attempt + 1 == _DEADLOCK_TRIES:
                raise
            log.warning("forget met a writer in a deadlock; trying again")
            receipt.counts = dict(derived)
    # Again, now that the tombstone stands: a copy published after the first pass by a writer
    # that started before the forget is deleted here, and none can be published any more.
    await _forget_derived(store, scope, receipt)
    store.cache.invalidate(scope)
    try:
        receipt.counts["chroma"] = await store.index.delete_scope(scope)
    except VectorIndexError as exc:
        receipt.pending = await pending_targets(store.pool, scope)
        raise ForgetIncompleteError(receipt, exc) from exc
    # The deleted ids' text leaves Chroma's log now; the file's VACUUM is compaction (below).
    settings = store.index.settings
    blanked = (
        await purge_log(settings, memory_ids, compact=False)
        if memory_ids
        else (0 if log_file(settings) is not None else None)
    )
    await _compact(store, receipt, chroma=bool(memory_ids))
    if blanked is None:
        receipt.unreachable.append(
            "the Chroma server's write-ahead log (set MEMORY_CHROMA_SERVER_PATH when the server "
            "runs on this host, or run `chroma vacuum` on its host)"
        )
    else:
        receipt.chroma_log_blanked = blanked
    async with store.pool.acquire() as conn:
        await conn.execute(
            "DELETE FROM deletion_outbox WHERE target = ANY($1::text[])"
            " AND owner_tenant = $2 AND owner_user = $3",
            list(CHROMA_TARGETS),
            scope.tenant_id,
            scope.user_id,
        )
    receipt.pending = await pending_targets(store.pool, scope)
    receipt.completed_at = datetime.now(UTC)
    log.info("forgot a user: %d rows/entries removed", receipt.total)
    return receipt


__all__ = [
    "DERIVED_FROM",
    "ForgetIncompleteError",
    "Receipt",
    "forget_user",
    "scoped_tables",
    "user_thread_ids",
]
