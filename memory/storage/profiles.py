"""The stored user profile (`user_settings.profile`) and the rows it is derived from."""

from __future__ import annotations

import json
from typing import Any

from memory.storage.db import Connection, Database
from memory.storage.rows import RECORD_COLUMNS, record_from_row
from memory.types import MemoryRecord, Scope


async def scope_version(pool: Database, scope: Scope) -> int:
    """The user's memory version (bumped by every change to their memories); 0 if none."""
    async with pool.acquire() as conn:
        value = await conn.fetchval(
            "SELECT version FROM scope_versions WHERE tenant_id = $1 AND user_id = $2",
            scope.tenant_id, scope.user_id,
        )  # fmt: skip
    return int(value or 0)


async def longterm_records(conn: Connection, scope: Scope) -> list[MemoryRecord]:
    """The user's active, unexpired long-term (not episodic) memories: a profile's sources."""
    rows = await conn.fetch(
        f"SELECT {RECORD_COLUMNS} FROM memories WHERE tenant_id = $1 AND user_id = $2"
        " AND status = 'active' AND kind <> 'episodic'"
        " AND (expires_at IS NULL OR expires_at > now())",
        scope.tenant_id, scope.user_id,
    )  # fmt: skip
    return [record_from_row(r) for r in rows]


async def stored_profile(conn: Connection, scope: Scope) -> dict[str, Any]:
    """The user's stored profile document ({} when none)."""
    stored = await conn.fetchval(
        "SELECT profile FROM user_settings WHERE tenant_id = $1 AND user_id = $2",
        scope.tenant_id, scope.user_id,
    )  # fmt: skip
    return dict(json.loads(stored) if isinstance(stored, str) else (stored or {}))


async def save_profile(conn: Connection, scope: Scope, profile: dict[str, Any]) -> None:
    """Store the profile document's keys, keeping any other keys already in it."""
    # `||` keeps keys other components keep in the profile document.
    await conn.execute(
        "INSERT INTO user_settings (tenant_id, user_id, profile) VALUES ($1, $2, $3::jsonb)"
        " ON CONFLICT (tenant_id, user_id) DO UPDATE"
        " SET profile = user_settings.profile || $3::jsonb, updated_at = now()",
        scope.tenant_id, scope.user_id, json.dumps(profile),
    )  # fmt: skip
