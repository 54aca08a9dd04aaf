"""Changing memories after they are written: status, reinforcement, deletion, consent, audit.

Every change is one transaction with its audit event and a bump of the user's version counter,
so other processes' caches reload.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from memory.storage.deletion_outbox import enqueue, has_chroma_work, owed, retry_chroma
from memory.storage.rows import RECORD_COLUMNS, record_from_row
from memory.storage.store_recall import StoreRecall
from memory.types import MemoryRecord, Scope, Status

log = logging.getLogger(__name__)


class StoreChanges(StoreRecall):
    """Scoped changes to existing memories and per-user settings."""

    # True until the outbox is known to hold no Chroma deletion: the first check looks.
    _deletions_owed: bool = True

    async def set_status(
        self,
        scope: Scope,
        memory_id: str,
        status: Status,
        *,
        reason: str,
        superseded_by: str | None = None,
        event: str | None = None,
    ) -> MemoryRecord | None:
        """Change a memory's status (supersede, expire, approve ...) with an audit event."""
        async with self.pool.acquire() as conn, conn.transaction():
            row = await conn.fetchrow(
                "UPDATE memories SET status = $4, superseded_by = COALESCE($5, superseded_by),"
                " updated_at = now(), version = version + 1"
                " WHERE tenant_id = $1 AND user_id = $2 AND id = $3 RETURNING " + RECORD_COLUMNS,
                scope.tenant_id,
                scope.user_id,
                memory_id,
                status.value,
                superseded_by,
            )
            if row is None:
                return None
            await self._event(
                conn,
                scope,
                memory_id,
                event or status.value,
                reason,
                {"superseded_by": superseded_by} if superseded_by else {},
            )
            await self._bump(conn, scope)
        self.cache.invalidate(scope)
        return record_from_row(row)

    async def reinforce(
        self, scope: Scope, memory_id: str, *, confidence_step: float = 0.05, reason: str
    ) -> MemoryRecord | None:
        """A near-duplicate was seen again: raise confidence and access stats, no new copy."""
        async with self.pool.acquire() as conn, conn.transaction():
            row = await conn.fetchrow(
                "UPDATE memories SET confidence = LEAST(1.0, confidence + $4),"
                " access_count = access_count + 1, last_accessed = now(), updated_at = now()"
                " WHERE tenant_id = $1 AND user_id = $2 AND id = $3 AND status = 'active'"
                " RETURNING " + RECORD_COLUMNS,
                scope.tenant_id,
                scope.user_id,
                memory_id,
                confidence_step,
            )
            if row is None:
                return None
            await self._event(conn, scope, memory_id, "update", reason, {})
        return record_from_row(row)

    async def delete(self, scope: Scope, memory_id: str, *, reason: str) -> dict[str, int]:
        """Delete one memory from Postgres and Chroma; return a receipt of what was removed.

        The Chroma deletion is recorded in the outbox in the same transaction as the row's, so
        it is owed even if this process dies before Chroma answers; with Chroma down the receipt
        says `chroma_pending: 1` and the deletion is retried later (see `deletion_outbox`).
        """
        await self.retry_deletions()  # older deletions first, if Chroma is back
        async with self.pool.acquire() as conn, conn.transaction():
            deleted = await conn.execute(
                "DELETE FROM memories WHERE tenant_id = $1 AND user_id = $2 AND id = $3",
                scope.tenant_id,
                scope.user_id,
                memory_id,
            )
            versions = await conn.execute(
                "DELETE FROM memory_versions WHERE tenant_id = $1 AND user_id = $2"
                " AND memory_id = $3",
                scope.tenant_id,
                scope.user_id,
                memory_id,
            )
            # The audit trail keeps that a deletion happened, never what was deleted.
            events = await conn.execute(
                "UPDATE memory_events SET detail = '{}'::jsonb, reason = 'redacted: deleted'"
                " WHERE tenant_id = $1 AND user_id = $2 AND memory_id = $3",
                scope.tenant_id,
                scope.user_id,
                memory_id,
            )
            n = int(deleted.split()[-1])
            if n:
                await self._event(conn, scope, memory_id, "delete", reason, {})
                await self._bump(conn, scope)
                await enqueue(conn, "chroma_ids", [memory_id], scope)
        self.cache.invalidate(scope)
        chroma = pending = 0
        if n:
            self._deletions_owed = True
            await retry_chroma(self.pool, self.index, self.index.settings, scope=scope)
            pending = int(await owed(self.pool, "chroma_ids", memory_id, scope))
            chroma = 1 - pending
            if pending:
                log.warning("Chroma unavailable while deleting %s: queued for retry", memory_id)
        return {
            "memories": n,
            "versions": int(versions.split()[-1]),
            "audit_events_redacted": int(events.split()[-1]),
            "chroma_entries": chroma,
            "chroma_pending": pending,
        }

    async def retry_deletions(self) -> int:
        """Retry the Chroma deletions still owed; how many completed (0 while Chroma is down)."""
        if not self._deletions_owed:
            return 0
        done = await retry_chroma(self.pool, self.index, self.index.settings)
        self._deletions_owed = await has_chroma_work(self.pool)
        return done

    async def touch_thread(self, scope: Scope, thread_id: str) -> None:
        """Remember that `thread_id` belongs to this user (for deletion of their checkpoints)."""
        async with self.pool.acquire() as conn:
            await conn.execute(
                "INSERT INTO user_threads (tenant_id, user_id, thread_id) VALUES ($1, $2, $3)"
                " ON CONFLICT (tenant_id, user_id, thread_id) DO UPDATE SET last_seen = now()",
                scope.tenant_id,
                scope.user_id,
                thread_id,
            )

    async def set_consent(self, scope: Scope, consent: bool) -> None:
        """Record whether the user consents to long-term memory."""
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute(
                "INSERT INTO user_settings (tenant_id, user_id, consent) VALUES ($1, $2, $3)"
                " ON CONFLICT (tenant_id, user_id) DO UPDATE SET consent = $3, updated_at = now()",
                scope.tenant_id,
                scope.user_id,
                consent,
            )
            await self._event(conn, scope, None, "consent", "granted" if consent else "revoked", {})

    # -- helpers ---------------------------------------------------------------------------

    async def _event(
        self,
        conn: Any,
        scope: Scope,
        memory_id: str | None,
        event: str,
        reason: str,
        detail: dict[str, Any],
    ) -> None:
        await conn.execute(
            "INSERT INTO memory_events (tenant_id, user_id, memory_id, event, reason, detail)"
            " VALUES ($1, $2, $3, $4, $5, $6::jsonb)",
            scope.tenant_id,
            scope.user_id,
            memory_id,
            event,
            reason,
            json.dumps(detail, ensure_ascii=False, default=str),
        )

    async def record_event(
        self,
        scope: Scope,
        memory_id: str | None,
        event: str,
        reason: str,
        detail: dict[str, Any] | None = None,
    ) -> None:
        """Append an audit event (gate decisions, conflicts, approvals ...)."""
        async with self.pool.acquire() as conn:
            await self._event(conn, scope, memory_id, event, reason, detail or {})
