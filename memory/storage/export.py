"""Export everything the system keeps about one user as JSON (the right to data portability).

The export holds the memories in every status (with their prior versions), the images kept
for image memories, the profile and consent, the audit trail and the user's thread ids. Vectors
are left out: they are derived from the content and meaningless outside this embedding model.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from memory.storage.images import image_rows
from memory.storage.store import MemoryStore
from memory.types import MemoryRecord, Scope, Status

EXPORT_FORMAT = "layered-memory-agent/export/v1"
_PAGE = 1000


def memory_to_dict(record: MemoryRecord) -> dict[str, Any]:
    """One memory as JSON-ready data (ISO dates, enum values)."""
    return {
        "id": record.id,
        "kind": record.kind.value,
        "category": record.category.value,
        "content": record.content,
        "context": record.context,
        "outcome": record.outcome,
        "source": record.source.value,
        "origin": record.origin.value,
        "status": record.status.value,
        "importance": record.importance,
        "confidence": record.confidence,
        "pinned": record.pinned,
        "tags": list(record.tags),
        "created_at": record.created_at.isoformat(),
        "occurred_at": record.occurred_at.isoformat(),
        "expires_at": record.expires_at.isoformat() if record.expires_at else None,
        "last_accessed": record.last_accessed.isoformat() if record.last_accessed else None,
        "access_count": record.access_count,
        "superseded_by": record.superseded_by,
        "valid_from": record.valid_from.isoformat() if record.valid_from else None,
        "valid_to": record.valid_to.isoformat() if record.valid_to else None,
        "version": record.version,
        "provenance": record.provenance,
    }


_JSONB_COLUMNS = frozenset({"snapshot", "profile", "detail"})


def _jsonable(name: str, value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if name in _JSONB_COLUMNS and isinstance(value, str):
        return json.loads(value)  # asyncpg hands jsonb over as text
    return value


async def _all_memories(store: MemoryStore, scope: Scope) -> list[MemoryRecord]:
    statuses = [s.value for s in Status]
    out: list[MemoryRecord] = []
    while True:
        page = await store.list_memories(scope, statuses=statuses, limit=_PAGE, offset=len(out))
        out.extend(page)
        if len(page) < _PAGE:
            return out


async def _rows(store: MemoryStore, sql: str, scope: Scope) -> list[dict[str, Any]]:
    async with store.pool.acquire() as conn:
        rows = await conn.fetch(sql, scope.tenant_id, scope.user_id)
    return [{k: _jsonable(k, v) for k, v in dict(r).items()} for r in rows]


async def export_user(store: MemoryStore, scope: Scope) -> dict[str, Any]:
    """Everything kept about `scope`, as one JSON-ready dict."""
    memories = await _all_memories(store, scope)
    versions = await _rows(
        store,
        "SELECT memory_id, version, snapshot, run_id, changed_at FROM memory_versions"
        " WHERE tenant_id = $1 AND user_id = $2 ORDER BY memory_id, version",
        scope,
    )
    settings = await _rows(
        store,
        "SELECT consent, profile, updated_at FROM user_settings"
        " WHERE tenant_id = $1 AND user_id = $2",
        scope,
    )
    threads = await _rows(
        store,
        "SELECT thread_id, first_seen, last_seen FROM user_threads"
        " WHERE tenant_id = $1 AND user_id = $2 ORDER BY first_seen",
        scope,
    )
    events = [{k: _jsonable(k, v) for k, v in e.items()} for e in await store.events(scope)]
    profile = settings[0] if settings else {"consent": True, "profile": {}, "updated_at": None}
    return {
        "format": EXPORT_FORMAT,
        "exported_at": datetime.now(UTC).isoformat(),
        "tenant_id": scope.tenant_id,
        "user_id": scope.user_id,
        "profile": profile,
        "memories": [memory_to_dict(m) for m in memories],
        "memory_versions": versions,
        # Image memories' features and the bytes kept of them (a metadata-free thumbnail).
        "images": [row.as_dict() for row in await image_rows(store, scope)],
        "audit_trail": events,
        "threads": threads,
    }


__all__ = ["EXPORT_FORMAT", "export_user", "memory_to_dict"]
