"""Writes accepted but not judged yet: a durable queue in Postgres, claimed with a lease.

A client that asks to remember something gets an id at once; the text (already redacted by the
caller, so no secret waits here) sits in `pending_writes` until a worker has run the governed
write path on it. A worker *claims* a row for `LEASE_S` seconds; a row whose worker stopped
(a crash, a restart) is claimed again once its lease runs out, so an accepted write is finished
by whichever process comes next. The row keeps the user's forget epoch at acceptance: a forget
in between deletes the row (it is keyed by `tenant_id` + `user_id`) and refuses the late write.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from memory.storage.db import Database
from memory.types import Scope

LEASE_S = 10.0
"""How long a claim lasts unless renewed: its worker renews it every third of that while it runs,
so a stopped worker's writes are taken over within seconds of the next process starting."""

WriteStatus = Literal["pending", "done", "failed"]


@dataclass(frozen=True, slots=True)
class PendingWrite:
    """One accepted write: who, what (redacted), how it stands and what it became."""

    id: str
    scope: Scope
    text: str | None
    via: str
    epoch: int
    status: WriteStatus
    result: dict[str, Any] | None
    created_at: datetime
    finished_at: datetime | None


def _row(row: Any) -> PendingWrite:
    result = row["result"]
    return PendingWrite(
        id=str(row["id"]),
        scope=Scope(row["tenant_id"], row["user_id"]),
        text=row["text"],
        via=row["via"],
        epoch=int(row["epoch"]),
        status=row["status"],
        result=json.loads(result) if isinstance(result, str) else result,
        created_at=row["created_at"],
        finished_at=row["finished_at"],
    )


async def accept(pool: Database, scope: Scope, text: str, *, via: str, epoch: int) -> PendingWrite:
    """Record a write to do, claimed by the caller (who starts on it at once)."""
    row = await pool.fetchrow(
        "INSERT INTO pending_writes (id, tenant_id, user_id, text, via, epoch, claimed_until)"
        " VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7)) RETURNING *",
        uuid.uuid4(),
        scope.tenant_id,
        scope.user_id,
        text,
        via,
        epoch,
        LEASE_S,
    )
    assert row is not None  # INSERT ... RETURNING always returns the row
    return _row(row)


async def claim_stale(pool: Database, limit: int = 32) -> list[PendingWrite]:
    """Claim pending writes whose worker is gone (lease run out), oldest first."""
    rows = await pool.fetch(
        "UPDATE pending_writes SET claimed_until = now() + make_interval(secs => $2)"
        " WHERE id IN (SELECT id FROM pending_writes WHERE status = 'pending'"
        "   AND (claimed_until IS NULL OR claimed_until < now())"
        "   ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED)"
        " RETURNING *",
        limit,
        LEASE_S,
    )
    return [_row(r) for r in rows]


async def renew(pool: Database, write_id: str) -> None:
    """Extend the claim on a write still being worked on."""
    await pool.execute(
        "UPDATE pending_writes SET claimed_until = now() + make_interval(secs => $2)"
        " WHERE id = $1 AND status = 'pending'",
        uuid.UUID(write_id),
        LEASE_S,
    )


async def finish(
    pool: Database, write_id: str, status: WriteStatus, result: dict[str, Any]
) -> None:
    """Record the outcome; the text is dropped, since the memories (or the audit) now hold it."""
    await pool.execute(
        "UPDATE pending_writes SET status = $2, result = $3::jsonb, text = NULL,"
        " claimed_until = NULL, finished_at = now() WHERE id = $1",
        uuid.UUID(write_id),
        status,
        json.dumps(result, default=str),
    )


async def get(pool: Database, scope: Scope, write_id: str) -> PendingWrite | None:
    """The caller's own write `write_id`; None for anything else (another user's, malformed)."""
    try:
        key = uuid.UUID(write_id)
    except ValueError:
        return None
    row = await pool.fetchrow(
        "SELECT * FROM pending_writes WHERE id = $1 AND tenant_id = $2 AND user_id = $3",
        key,
        scope.tenant_id,
        scope.user_id,
    )
    return None if row is None else _row(row)


__all__ = [
    "LEASE_S",
    "PendingWrite",
    "WriteStatus",
    "accept",
    "claim_stale",
    "finish",
    "get",
    "renew",
]
