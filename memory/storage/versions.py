"""Versioned changes to `memories`: full prior-state snapshots in `memory_versions`, restore.

Every change consolidation makes to an existing row first writes the row's full prior state to
`memory_versions` with the run id, then bumps the row's `version`; a row a run creates gets a
version-0 marker. That is all a rollback needs: the earliest snapshot a run wrote for a memory
is the memory as it was before the run.

`rows.record_snapshot` covers the record's fields; a rollback must also bring back the columns
a record does not carry (the vector, the trust level, the update time), so they are added here.
The vector travels base64-encoded: 1,536 bytes of float32 become ~2 KB of JSON per snapshot.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from memory.storage.db import Connection, Database
from memory.storage.rows import (
    INSERT_SQL,
    LOCK_IN_ID_ORDER,
    RECORD_COLUMNS,
    insert_params,
    record_from_row,
    record_snapshot,
)
from memory.types import MemoryRecord, NewMemory, Scope

SNAPSHOT_COLUMNS = RECORD_COLUMNS + ", updated_at, trust, embedding, embedding_model, own_embedding"

CREATED_MARKER = {"created": True}
"""The snapshot of version 0: the row did not exist before the run (rollback deletes it)."""

_RESTORE_SQL = """
UPDATE memories SET kind = $4, category = $5, content = $6, context = $7, outcome = $8,
    source = $9, origin = $10, importance = $11, confidence = $12, trust = $13, pinned = $14,
    created_at = $15, updated_at = $16, occurred_at = $17, expires_at = $18, access_count = $19,
    last_accessed = $20, status = $21,
    superseded_by = (SELECT m.id FROM memories m WHERE m.id = $22),
    provenance = $23::jsonb, tags = $24, content_hash = $25, version = $26, embedding = $27,
    embedding_model = $28, indexed_at = $29, own_embedding = $30
WHERE tenant_id = $1 AND user_id = $2 AND id = $3
"""

_UPDATE_SQL = (
    """
UPDATE memories SET status = COALESCE($4, status),
    superseded_by = COALESCE($5, superseded_by), confidence = COALESCE($6, confidence),
    importance = COALESCE($7, importance), access_count = COALESCE($8, access_count),
    last_accessed = COALESCE($9, last_accessed), provenance = COALESCE($10::jsonb, provenance),
    version = version + 1, updated_at = now()
WHERE tenant_id = $1 AND user_id = $2 AND id = $3 AND version = $11
RETURNING """
    + RECORD_COLUMNS
)

_VERSION_SQL = (
    "INSERT INTO memory_versions (memory_id, version, tenant_id, user_id, snapshot, run_id)"
    " VALUES ($1, $2, $3, $4, $5::jsonb, $6)"
)

_PURGEABLE = "tenant_id = $1 AND user_id = $2 AND status = 'expired' AND updated_at < $3"

_EVENT_SQL = (
    "INSERT INTO memory_events (tenant_id, user_id, memory_id, event, reason, detail, actor)"
    " VALUES ($1, $2, $3, $4, $5, $6::jsonb, 'consolidation')"
)


def full_snapshot(row: Any) -> dict[str, Any]:
    """Everything needed to restore a row selected with SNAPSHOT_COLUMNS."""
    snap = record_snapshot(record_from_row(row))
    blob, own = row["embedding"], row["own_embedding"]
    snap.update(
        updated_at=row["updated_at"].isoformat(),
        trust=row["trust"],
        embedding=base64.b64encode(blob).decode("ascii") if blob is not None else None,
        embedding_model=row["embedding_model"],
        own_embedding=base64.b64encode(own).decode("ascii") if own is not None else None,
    )
    return snap


def snapshot_json(snapshot: dict[str, Any]) -> str:
    """The snapshot as JSON for the jsonb column."""
    return json.dumps(snapshot, ensure_ascii=False, default=str)


def load_snapshot(value: Any) -> dict[str, Any]:
    """A snapshot read back from jsonb (asyncpg returns it as text)."""
    data = json.loads(value) if isinstance(value, str) else dict(value)
    return dict(data)


def _when(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def snapshot_vector(snapshot: dict[str, Any], key: str = "embedding") -> bytes | None:
    """The stored vector bytes of a snapshot (`key`: "embedding" or "own_embedding").

    A snapshot taken before own-text vectors were stored has none: restored as NULL, the
    memory's one vector serves as both, as it did then.
    """
    blob = snapshot.get(key)
    return base64.b64decode(blob) if blob else None


def _restore_params(snapshot: dict[str, Any]) -> tuple[Any, ...]:
    s = snapshot
    return (
        s["tenant_id"], s["user_id"], s["id"], s["kind"], s["category"], s["content"],
        s["context"], s["outcome"], s["source"], s["origin"], float(s["importance"]),
        float(s["confidence"]), s["trust"], bool(s["pinned"]), _when(s["created_at"]),
        _when(s["updated_at"]), _when(s["occurred_at"]), _when(s["expires_at"]),
        int(s["access_count"]), _when(s["last_accessed"]), s["status"], s["superseded_by"],
        json.dumps(s["provenance"], ensure_ascii=False, default=str), list(s["tags"]),
        s["content_hash"], int(s["version"]), snapshot_vector(s), s["embedding_model"],
        _when(s["indexed_at"]), snapshot_vector(s, "own_embedding"),
    )  # fmt: skip


async def run_snapshots(
    conn: Connection, run_id: str, scope: Scope
) -> tuple[dict[str, dict[str, Any]], dict[str, int]]:
    """Per memory a run changed for `scope`: the state before the run and its last version.

    The earliest snapshot the run wrote is the memory as it was before the run.
    """
    rows = await conn.fetch(
        "SELECT memory_id, version, snapshot FROM memory_versions WHERE run_id = $1"
        " AND tenant_id = $2 AND user_id = $3 ORDER BY memory_id, version",
        run_id, scope.tenant_id, scope.user_id,
    )  # fmt: skip
    first: dict[str, dict[str, Any]] = {}
    last: dict[str, int] = {}
    for v in rows:
        first.setdefault(v["memory_id"], load_snapshot(v["snapshot"]))
        last[v["memory_id"]] = int(v["version"])
    return first, last


async def version_snapshots(conn: Connection, scope: Scope, ids: Sequence[str]) -> list[Any]:
    """Every stored version (memory_id, version, snapshot) of the given memories."""
    return list(
        await conn.fetch(
            "SELECT memory_id, version, snapshot FROM memory_versions WHERE tenant_id = $1"
            " AND user_id = $2 AND memory_id = ANY($3::text[])",
            scope.tenant_id,
            scope.user_id,
            list(ids),
        )  # fmt: skip
    )


async def memory_rows(
    conn: Connection, scope: Scope, ids: Sequence[str], *, with_vectors: bool = False
) -> list[Any]:
    """The current rows of the given memories (any status), with their vectors if asked."""
    columns = RECORD_COLUMNS + (", embedding" if with_vectors else "")
    return list(
        await conn.fetch(
            f"SELECT {columns} FROM memories WHERE tenant_id = $1 AND user_id = $2"
            " AND id = ANY($3::text[])",
            scope.tenant_id,
            scope.user_id,
            list(ids),
        )  # fmt: skip
    )


async def active_rows(pool: Database, scope: Scope) -> list[Any]:
    """A user's active rows with their stored vectors (a consolidation run's working set)."""
    async with pool.acquire() as conn:
        return list(
            await conn.fetch(
                f"SELECT {RECORD_COLUMNS}, embedding FROM memories"
                " WHERE tenant_id = $1 AND user_id = $2 AND status = 'active'",
                scope.tenant_id,
                scope.user_id,
            )  # fmt: skip
        )


async def lock_rows(conn: Connection, scope: Scope, ids: Sequence[str]) -> dict[str, Any]:
    """Lock the given rows for update (inside a transaction); their full state by id.

    In id order, as every multi-row lock on `memories` is (`rows.LOCK_IN_ID_ORDER`).
    """
    rows = await conn.fetch(
        f"SELECT {SNAPSHOT_COLUMNS} FROM memories WHERE tenant_id = $1 AND user_id = $2"
        f" AND id = ANY($3::text[]) {LOCK_IN_ID_ORDER}",
        scope.tenant_id, scope.user_id, list(ids),
    )  # fmt: skip
    return {row["id"]: row for row in rows}


async def current_versions(conn: Connection, scope: Scope, ids: Sequence[str]) -> dict[str, int]:
    """Lock the given rows for update; their current version by id."""
    rows = await conn.fetch(
        "SELECT id, version FROM memories WHERE tenant_id = $1 AND user_id = $2"
        " AND id = ANY($3::text[]) FOR UPDATE",
        scope.tenant_id, scope.user_id, list(ids),
    )  # fmt: skip
    return {r["id"]: int(r["version"]) for r in rows}


async def log_event(
    conn: Connection,
    scope: Scope,
    memory_id: str | None,
    event: str,
    reason: str,
    detail: Mapping[str, Any],
) -> None:
    """Add one consolidation event to the user's audit log."""
    await conn.execute(_EVENT_SQL, scope.tenant_id, scope.user_id, memory_id, event, reason,
                       json.dumps(dict(detail)))  # fmt: skip


async def insert_created(
    conn: Connection,
    scope: Scope,
    memory_id: str,
    memory: NewMemory,
    vector: Any,
    embedding_model: str,
    run_id: str,
    *,
    own: Any = None,
) -> MemoryRecord:
    """Insert a memory a run creates, with its version-0 marker (`own`: own-text vector)."""
    params = insert_params(memory_id, scope.tenant_id, scope.user_id, memory, vector,
                           embedding_model, own)  # fmt: skip
    record = record_from_row(await conn.fetchrow(INSERT_SQL, *params))
    await conn.execute(_VERSION_SQL, record.id, 0, scope.tenant_id, scope.user_id,
                       json.dumps(CREATED_MARKER), run_id)  # fmt: skip
    return record


async def update_versioned(
    conn: Connection,
    scope: Scope,
    row: Any,
    run_id: str,
    *,
    status: str | None = None,
    superseded_by: str | None = None,
    fields: Mapping[str, Any] | None = None,
) -> MemoryRecord:
    """Snapshot a row locked with `lock_rows`, then change it and bump its version.

    `fields` may set confidence, importance, access_count, last_accessed and provenance; a
    missing or None value keeps the column as it is.
    """
    f = fields or {}
    provenance = f.get("provenance")
    await conn.execute(_VERSION_SQL, row["id"], row["version"], scope.tenant_id, scope.user_id,
                       snapshot_json(full_snapshot(row)), run_id)  # fmt: skip
    updated = await conn.fetchrow(
        _UPDATE_SQL,
        scope.tenant_id, scope.user_id, row["id"], status, superseded_by,
        f.get("confidence"), f.get("importance"), f.get("access_count"), f.get("last_accessed"),
        json.dumps(provenance, ensure_ascii=False, default=str) if provenance is not None else None,
        row["version"],
    )  # fmt: skip
    return record_from_row(updated)


async def restore(conn: Connection, snapshot: dict[str, Any]) -> None:
    """Put a row back exactly as a full snapshot recorded it, vector and version included."""
    await conn.execute(_RESTORE_SQL, *_restore_params(snapshot))


async def delete_memories(conn: Connection, scope: Scope, ids: Sequence[str]) -> None:
    """Delete the given rows for good (rows a rolled-back run created)."""
    await conn.execute(
        "DELETE FROM memories WHERE tenant_id = $1 AND user_id = $2 AND id = ANY($3::text[])",
        scope.tenant_id, scope.user_id, list(ids),
    )  # fmt: skip


async def drop_run_versions(conn: Connection, run_id: str, scope: Scope) -> None:
    """Delete the snapshots one run wrote for one user (after rolling it back)."""
    await conn.execute(
        "DELETE FROM memory_versions WHERE run_id = $1 AND tenant_id = $2 AND user_id = $3",
        run_id, scope.tenant_id, scope.user_id,
    )  # fmt: skip


async def mark_unindexed(pool: Database, scope: Scope, ids: Sequence[str]) -> None:
    """Mark rows as missing from Chroma, so a reindex puts them back."""
    async with pool.acquire() as conn:
        await conn.execute(
            "WITH target AS (SELECT id FROM memories WHERE tenant_id = $1 AND user_id = $2"
            f" AND id = ANY($3::text[]) {LOCK_IN_ID_ORDER})"
            " UPDATE memories m SET indexed_at = NULL FROM target WHERE m.id = target.id",
            scope.tenant_id, scope.user_id, list(ids),
        )  # fmt: skip


async def count_purgeable(pool: Database, scope: Scope, cutoff: datetime) -> int:
    """How many of a user's rows expired before `cutoff` (what a purge would delete)."""
    async with pool.acquire() as conn:
        return int(
            await conn.fetchval(
                f"SELECT count(*) FROM memories WHERE {_PURGEABLE}",
                scope.tenant_id,
                scope.user_id,
                cutoff,
            )  # fmt: skip
        )


async def purge_expired(pool: Database, scope: Scope, cutoff: datetime) -> list[str]:
    """Delete a user's rows expired before `cutoff`, with their version history; their ids.

    A purged memory's history goes with it, so no text of it stays behind in `memory_versions`.
    """
    t, u = scope.tenant_id, scope.user_id
    async with pool.acquire() as conn, conn.transaction():
        ids = [r["id"] for r in await conn.fetch(
            f"DELETE FROM memories WHERE {_PURGEABLE} RETURNING id", t, u, cutoff)]  # fmt: skip
        await conn.execute(
            "DELETE FROM memory_versions WHERE tenant_id = $1 AND user_id = $2"
            " AND memory_id = ANY($3::text[])",
            t, u, ids,
        )  # fmt: skip
    return ids
