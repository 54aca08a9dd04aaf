"""Server-side sessions of the memory inspector: what makes a browser's sign-out final.

A session is a random id the browser holds in its cookie (beside the token it signed in with);
Postgres keeps only the id's SHA-256, the user it belongs to and when it ends, so a copy of the
table signs nobody in. Every request with the cookie must find its row: signing out deletes
it, and "sign out everywhere" deletes every row of the user, in every worker at once.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime

from memory.storage.db import Database
from memory.types import Scope


def _digest(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("utf-8", "replace")).hexdigest()


async def open_session(db: Database, scope: Scope, expires_at: datetime) -> str:
    """A new session of the user until `expires_at`; returns its id (shown once, never stored)."""
    session_id = secrets.token_urlsafe(32)
    async with db.transaction() as conn:
        # Housekeeping on the way in: the user's ended sessions go, so the table stays small.
        await conn.execute(
            "DELETE FROM inspector_sessions WHERE tenant_id = $1 AND user_id = $2"
            " AND expires_at <= now()",
            scope.tenant_id,
            scope.user_id,
        )
        await conn.execute(
            "INSERT INTO inspector_sessions (id_sha256, tenant_id, user_id, expires_at)"
            " VALUES ($1, $2, $3, $4)",
            _digest(session_id),
            scope.tenant_id,
            scope.user_id,
            expires_at,
        )
    return session_id


async def session_live(db: Database, session_id: str, scope: Scope) -> bool:
    """Whether `session_id` is a live session of exactly this user."""
    found = await db.fetchval(
        "SELECT 1 FROM inspector_sessions WHERE id_sha256 = $1 AND tenant_id = $2"
        " AND user_id = $3 AND expires_at > now()",
        _digest(session_id),
        scope.tenant_id,
        scope.user_id,
    )
    return found is not None


async def end_session(db: Database, session_id: str) -> None:
    """Sign one browser out (idempotent)."""
    await db.execute("DELETE FROM inspector_sessions WHERE id_sha256 = $1", _digest(session_id))


async def end_all_sessions(db: Database, scope: Scope) -> int:
    """Sign the user out of every browser; how many sessions ended."""
    status = await db.execute(
        "DELETE FROM inspector_sessions WHERE tenant_id = $1 AND user_id = $2",
        scope.tenant_id,
        scope.user_id,
    )
    return int(status.rsplit(" ", 1)[-1])


__all__ = ["end_all_sessions", "end_session", "open_session", "session_live"]
