"""Changes a person makes to one of their memories: new text, pin, unpin. Each one versioned.

Before a row changes, its current state is copied into `memory_versions` under its current
version number (no run id: a person did it, not consolidation), then the row's version counts
up. The version history therefore shows every earlier text, and a consolidation run that touched
the memory before refuses to roll back over the newer change instead of silently undoing it.
Browsing helpers for the inspector (date filters, the unindexed backlog) live here too.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Collection
from dataclasses import replace
from datetime import datetime
from typing import Any

from memory.citations import neutralise
from memory.storage.db import Connection
from memory.storage.rows import (
    RECORD_COLUMNS,
    content_hash,
    record_from_row,
    record_snapshot,
    vector_to_bytes,
)
from memory.storage.store import MemoryStore
from memory.types import MemoryKind, MemoryRecord, Scope

_SNAPSHOT_SQL = (
    "INSERT INTO memory_versions (memory_id, version, tenant_id, user_id, snapshot)"
    " VALUES ($1, $2, $3, $4, $5::jsonb)"
    " ON CONFLICT (memory_id, version) DO UPDATE SET snapshot = EXCLUDED.snapshot,"
    " run_id = NULL, changed_at = now()"
)


async def _locked_row(conn: Connection, scope: Scope, memory_id: str) -> Any:
    return await conn.fetchrow(
        f"SELECT {RECORD_COLUMNS} FROM memories"
        " WHERE tenant_id = $1 AND user_id = $2 AND id = $3 FOR UPDATE",
        scope.tenant_id,
        scope.user_id,
        memory_id,
    )


async def _snapshot(conn: Connection, scope: Scope, record: MemoryRecord, change: str) -> None:
    snap = {**record_snapshot(record), "change": change}
    await conn.execute(
        _SNAPSHOT_SQL,
        record.id,
        record.version,
        scope.tenant_id,
        scope.user_id,
        json.dumps(snap, ensure_ascii=False, default=str),
    )


async def replace_content(
    store: MemoryStore,
    scope: Scope,
    memory_id: str,
    content: str,
    *,
    reason: str,
    tags: list[str] | None = None,
    detail: dict[str, Any] | None = None,
) -> MemoryRecord | None:
    """Give a memory new (already gated and redacted) text as a new version; None if absent.

    The caller decides whether the text may be stored; this only versions, re-embeds and
    re-indexes it. The origin becomes explicit: the person wrote these words themselves.
    """
    current = await store.get(scope, memory_id)
    if current is None:
        return None
    # Only the composer makes citations (see `memory.citations`); folding a long text: a thread.
    content = await asyncio.to_thread(neutralise, content)
    # The vector is computed from the new text with the memory's own context and speaker.
    edited = replace(current, content=content)
    vectors, own = await store.embed_memories([edited])
    vector = vectors[0]
    own_bytes = vector_to_bytes(own[0]) if store.own_text(edited) is not None else None
    async with store.pool.acquire() as conn, conn.transaction():
        row = await _locked_row(conn, scope, memory_id)
        if row is None:
            return None
        await _snapshot(conn, scope, record_from_row(row), "edit")
        updated = await conn.fetchrow(
            "UPDATE memories SET content = $4, content_hash = $5, embedding = $6,"
            " embedding_model = $7, origin = 'explicit', tags = $8, updated_at = now(),"
            " own_embedding = $9,"
            " version = version + 1, indexed_at = NULL"
            " WHERE tenant_id = $1 AND user_id = $2 AND id = $3 RETURNING " + RECORD_COLUMNS,
            scope.tenant_id,
            scope.user_id,
            memory_id,
            content,
            content_hash(content),
            vector_to_bytes(vector),
            store.embedder.name,
            list(tags if tags is not None else row["tags"] or []),
            own_bytes,
        )
        await store.add_event(conn, scope, memory_id, "edit", reason, detail or {})
        await store.bump_version(conn, scope)
    store.cache.invalidate(scope)
    record = record_from_row(updated)
    # Indexed like any write (the index filters by status at query time); if Chroma is down the
    # row stays unindexed and the backlog's reindex picks it up.
    await store.index_records(scope, [record], vectors)
    return record


async def set_pinned(
    store: MemoryStore, scope: Scope, memory_id: str, pinned: bool, *, reason: str
) -> MemoryRecord | None:
    """Pin (never decays, wins conflicts against chat) or unpin a memory; None if absent."""
    async with store.pool.acquire() as conn, conn.transaction():
        row = await _locked_row(conn, scope, memory_id)
        if row is None:
            return None
        if bool(row["pinned"]) == pinned:
            return record_from_row(row)
        await _snapshot(conn, scope, record_from_row(row), "pin" if pinned else "unpin")
        updated = await conn.fetchrow(
            "UPDATE memories SET pinned = $4, updated_at = now(), version = version + 1"
            " WHERE tenant_id = $1 AND user_id = $2 AND id = $3 RETURNING " + RECORD_COLUMNS,
            scope.tenant_id,
            scope.user_id,
            memory_id,
            pinned,
        )
        await store.add_event(conn, scope, memory_id, "pin" if pinned else "unpin", reason, {})
        await store.bump_version(conn, scope)
    store.cache.invalidate(scope)
    return record_from_row(updated)


async def versions(store: MemoryStore, scope: Scope, memory_id: str) -> list[dict[str, Any]]:
    """Earlier states of one memory, oldest first: version, when, by whom, and its snapshot."""
    async with store.pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT version, run_id, changed_at, snapshot FROM memory_versions"
            " WHERE tenant_id = $1 AND user_id = $2 AND memory_id = $3 ORDER BY version",
            scope.tenant_id,
            scope.user_id,
            memory_id,
        )
    out = []
    for r in rows:
        snap = r["snapshot"]
        out.append(
            {
                "version": int(r["version"]),
                "run_id": r["run_id"],
                "changed_at": r["changed_at"],
                "snapshot": json.loads(snap) if isinstance(snap, str) else dict(snap),
            }
        )
    return out


async def superseding(store: MemoryStore, scope: Scope, memory_id: str) -> list[MemoryRecord]:
    """The memories this one replaced (those whose `superseded_by` points at it)."""
    async with store.pool.acquire() as conn:
        rows = await conn.fetch(
            f"SELECT {RECORD_COLUMNS} FROM memories WHERE tenant_id = $1 AND user_id = $2"
            " AND superseded_by = $3 ORDER BY occurred_at DESC LIMIT 100",
            scope.tenant_id,
            scope.user_id,
            memory_id,
        )
    return [record_from_row(r) for r in rows]


async def browse(
    store: MemoryStore,
    scope: Scope,
    *,
    kinds: Collection[MemoryKind],
    statuses: Collection[str],
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int = 50,
    offset: int = 0,
) -> list[MemoryRecord]:
    """The user's memories by kind, status and date (when they happened), newest first."""
    async with store.pool.acquire() as conn:
        rows = await conn.fetch(
            f"SELECT {RECORD_COLUMNS} FROM memories WHERE tenant_id = $1 AND user_id = $2"
            " AND kind = ANY($3::text[]) AND status = ANY($4::text[])"
            " AND ($5::timestamptz IS NULL OR occurred_at >= $5)"
            " AND ($6::timestamptz IS NULL OR occurred_at < $6)"
            " ORDER BY occurred_at DESC, id LIMIT $7 OFFSET $8",
            scope.tenant_id,
            scope.user_id,
            [k.value for k in kinds],
            list(statuses),
            since,
            until,
            limit,
            offset,
        )
    return [record_from_row(r) for r in rows]


async def unindexed_backlog(store: MemoryStore, tenant: str) -> dict[str, Any]:
    """How many of a tenant's rows wait to be indexed in Chroma, and since when."""
    async with store.pool.acquire() as conn:
        row = await conn.fetchrow(
            "SELECT count(*) AS n, min(created_at) AS oldest FROM memories"
            " WHERE tenant_id = $1 AND indexed_at IS NULL AND status <> 'deleted'",
            tenant,
        )
    assert row is not None  # an aggregate always returns one row
    return {"unindexed": int(row["n"]), "oldest": row["oldest"]}


__all__ = [
    "browse",
    "replace_content",
    "set_pinned",
    "superseding",
    "unindexed_backlog",
    "versions",
]
