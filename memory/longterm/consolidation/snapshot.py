"""Full snapshots of `memories` rows and the SQL that restores one exactly (for rollback).

`rows.record_snapshot` covers the record's fields; a rollback must also bring back the columns
a record does not carry (the vector, the trust level, the update time), so they are added here.
The vector travels base64-encoded: 1,536 bytes of float32 become ~2 KB of JSON per snapshot.
"""

from __future__ import annotations

import base64
import json
from datetime import datetime
from typing import Any

from memory.storage.rows import RECORD_COLUMNS, record_from_row, record_snapshot
from memory.types import Scope

SNAPSHOT_COLUMNS = RECORD_COLUMNS + ", updated_at, trust, embedding, embedding_model"

CREATED_MARKER = {"created": True}
"""The snapshot of version 0: the row did not exist before the run (rollback deletes it)."""

RESTORE_SQL = """
UPDATE memories SET kind = $4, category = $5, content = $6, context = $7, outcome = $8,
    source = $9, origin = $10, importance = $11, confidence = $12, trust = $13, pinned = $14,
    created_at = $15, updated_at = $16, occurred_at = $17, expires_at = $18, access_count = $19,
    last_accessed = $20, status = $21,
    superseded_by = (SELECT m.id FROM memories m WHERE m.id = $22),
    provenance = $23::jsonb, tags = $24, content_hash = $25, version = $26, embedding = $27,
    embedding_model = $28, indexed_at = $29
WHERE tenant_id = $1 AND user_id = $2 AND id = $3
"""


def full_snapshot(row: Any) -> dict[str, Any]:
    """Everything needed to restore a row selected with SNAPSHOT_COLUMNS."""
    snap = record_snapshot(record_from_row(row))
    blob = row["embedding"]
    snap.update(
        updated_at=row["updated_at"].isoformat(),
        trust=row["trust"],
        embedding=base64.b64encode(blob).decode("ascii") if blob is not None else None,
        embedding_model=row["embedding_model"],
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


async def run_snapshots(
    conn: Any, run_id: str, scope: Scope
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


def snapshot_vector(snapshot: dict[str, Any]) -> bytes | None:
    """The stored vector bytes of a snapshot."""
    blob = snapshot.get("embedding")
    return base64.b64decode(blob) if blob else None


def restore_params(snapshot: dict[str, Any]) -> tuple[Any, ...]:
    """Positional parameters for RESTORE_SQL."""
    s = snapshot
    return (
        s["tenant_id"], s["user_id"], s["id"], s["kind"], s["category"], s["content"],
        s["context"], s["outcome"], s["source"], s["origin"], float(s["importance"]),
        float(s["confidence"]), s["trust"], bool(s["pinned"]), _when(s["created_at"]),
        _when(s["updated_at"]), _when(s["occurred_at"]), _when(s["expires_at"]),
        int(s["access_count"]), _when(s["last_accessed"]), s["status"], s["superseded_by"],
        json.dumps(s["provenance"], ensure_ascii=False, default=str), list(s["tags"]),
        s["content_hash"], int(s["version"]), snapshot_vector(s), s["embedding_model"],
        _when(s["indexed_at"]),
    )  # fmt: skip
