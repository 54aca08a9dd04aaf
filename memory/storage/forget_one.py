"""Delete one memory everywhere it went: Postgres, Chroma, the audit text, and thread state.

`MemoryStore.delete` removes the row, its versions and its Chroma entry, and blanks the audit
events that mention it. A memory that was recalled also sits in the checkpoints of the threads
where it was injected: the `evidence`, `preferences` and `rules_recalled` channels and the
composed `prompt`.
Those copies are replaced with empty lists (what the channels hold when nothing was recalled),
so the thread still loads and the next turn recomposes them without the memory. The conversation
itself (the `messages` channel) is the user's own text and stays; "forget me" deletes it.
"""

from __future__ import annotations

from memory.storage.db import Connection
from memory.storage.deletion_outbox import owner_digest
from memory.storage.store import MemoryStore
from memory.storage.threads import others_threads
from memory.storage.tombstones import DERIVED_FROM
from memory.storage.user_locks import user_write_lock
from memory.types import Scope

DERIVED_CHANNELS = ("evidence", "preferences", "rules_recalled", "prompt")
SOURCE_MEMORY = "source_memory"
"""Provenance (and bus event data) key of a published copy: the id of the memory it copies."""
_EMPTY_LIST = b"\x90"  # msgpack for [] (type "msgpack"), valid for all three list channels
_PREFIX_CHARS = 60  # snippets may be cut to fit the prompt budget; their start survives


async def _scrub(conn: Connection, threads: list[str], needles: list[str]) -> int:
    scrubbed = 0
    for table in ("checkpoint_blobs", "checkpoint_writes"):
        if await conn.fetchval("SELECT to_regclass($1)", table) is None:
            continue
        status = await conn.execute(
            f"UPDATE \"{table}\" SET type = 'msgpack', blob = $3"
            " WHERE thread_id = ANY($1::text[]) AND channel = ANY($2::text[])"
            # An encrypted blob ("msgpack+aesgcm") cannot be searched: emptied unconditionally,
            # which costs only a recompose of the derived channels on the next turn.
            " AND (type LIKE '%+%' OR EXISTS (SELECT 1 FROM unnest($4::text[]) AS n"
            "      WHERE position(convert_to(n, 'UTF8') in blob) > 0))",
            threads,
            list(DERIVED_CHANNELS),
            _EMPTY_LIST,
            needles,
        )
        scrubbed += int(status.split()[-1])
    return scrubbed


async def delete_memory(
    store: MemoryStore, scope: Scope, memory_id: str, *, reason: str
) -> dict[str, int]:
    """Delete one memory of `scope`; the receipt adds `images` and `checkpoint_copies`."""
    record = await store.get(scope, memory_id)
    async with store.pool.acquire() as conn:
        # An image memory's bytes go with its row (ON DELETE CASCADE); counted for the receipt.
        images = await conn.fetchval(
            "SELECT count(*) FROM memory_images WHERE tenant_id = $1 AND user_id = $2"
            " AND memory_id = $3",
            scope.tenant_id,
            scope.user_id,
            memory_id,
        )
    # Under the user's write lock: a turn's write reads the user's memories and then writes
    # (a merge repeats a neighbour's text, an update carries it as context), all under this
    # lock. Deleting in between would let that write put the deleted text back afterwards;
    # waiting for it orders the delete after the write, which then finds the memory gone or
    # has already superseded it. Consolidation re-checks its sources itself (`versions.apply`).
    async with user_write_lock(store.pool, scope):
        receipt = await store.delete(scope, memory_id, reason=reason)
    receipt["images"] = int(images) if receipt["memories"] else 0
    _, receipt["shared_copies"] = await delete_copies(
        store, scope, memory_id=memory_id, reason="the memory it copies was deleted"
    )
    receipt["checkpoint_copies"] = 0
    if record is None or not receipt["memories"]:
        return receipt
    needles = [memory_id, record.content[:_PREFIX_CHARS]]
    async with store.pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT thread_id FROM user_threads WHERE tenant_id = $1 AND user_id = $2",
            scope.tenant_id,
            scope.user_id,
        )
        recorded = [r["thread_id"] for r in rows]
        threads = sorted(set(recorded) - await others_threads(conn, scope, recorded))
        if threads:
            receipt["checkpoint_copies"] = await _scrub(conn, threads, needles)
    return receipt


async def delete_copies(
    store: MemoryStore, scope: Scope, *, memory_id: str | None, reason: str
) -> tuple[int, int]:
    """Delete what other scopes of the tenant keep of `scope`'s memories, and its bus events.

    A published copy (the tenant's shared agent memory, recalled into every user's prompt)
    names its source by the owner's digest and the memory's id: with `memory_id` only that
    memory's copies go (a memory the user deleted, or one a split secret's scrub removed),
    without it every copy of the user's (a forget). Returns (events, memories) deleted.
    """
    digest = owner_digest(scope)
    async with store.pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT user_id, id FROM memories WHERE tenant_id = $1 AND user_id <> $2"
            " AND provenance->>$3 = $4 AND ($6::text IS NULL OR provenance->>$5 = $6)",
            scope.tenant_id, scope.user_id, DERIVED_FROM, digest, SOURCE_MEMORY, memory_id,
        )  # fmt: skip
        status = await conn.execute(
            "DELETE FROM agent_events WHERE tenant_id = $1"
            " AND ((data->>$2 = $3 AND ($5::text IS NULL OR data->>$4 = $5))"
            "      OR memory_id = ANY($6::text[]))",
            scope.tenant_id, DERIVED_FROM, digest, SOURCE_MEMORY, memory_id,
            [r["id"] for r in rows],
        )  # fmt: skip
    removed = 0
    for row in rows:
        owner = Scope(scope.tenant_id, row["user_id"])
        async with user_write_lock(store.pool, owner):  # as `delete_memory`, for that scope
            done = await store.delete(owner, row["id"], reason=reason)
        removed += done["memories"]
    return int(status.split()[-1]), removed


async def memories_holding(
    store: MemoryStore, scope: Scope, thread_id: str, needles: list[str]
) -> list[str]:
    """Ids of `scope`'s memories written from `thread_id` whose text holds any of `needles`.

    For a secret found split across a thread's messages after its first part was remembered:
    the memories that carry a part are found by their source thread and their text.
    """
    if not needles:
        return []
    async with store.pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT id FROM memories WHERE tenant_id = $1 AND user_id = $2"
            " AND provenance->>'thread_id' = $3"
            " AND EXISTS (SELECT 1 FROM unnest($4::text[]) AS n WHERE strpos(content, n) > 0)",
            scope.tenant_id,
            scope.user_id,
            thread_id,
            needles,
        )
    return [str(r["id"]) for r in rows]


__all__ = [
    "DERIVED_CHANNELS",
    "SOURCE_MEMORY",
    "delete_copies",
    "delete_memory",
    "memories_holding",
]
