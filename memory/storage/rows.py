"""Mapping between `memories` rows and `MemoryRecord`s, and the shared SQL fragments."""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from memory.types import (
    Category,
    MemoryKind,
    MemoryRecord,
    NewMemory,
    Origin,
    Source,
    Status,
)

RECORD_COLUMNS = (
    "id, tenant_id, user_id, kind, category, content, context, outcome, source, origin, "
    "importance, confidence, pinned, created_at, occurred_at, expires_at, access_count, "
    "last_accessed, status, superseded_by, provenance, tags, content_hash, version, indexed_at, "
    "valid_from, valid_to"
)

LOCK_IN_ID_ORDER = "ORDER BY id FOR UPDATE"
"""Ends a `SELECT id FROM memories ...` that a multi-row UPDATE joins on, so that the rows are
locked in one global order. Batch updates run concurrently (the Chroma indexer marking rows
indexed, recall storing features, access statistics); each locking its rows in the order of
its own plan or input deadlocked against the others (83 of 135 statements failed in a stress
run of two indexers and three feature writers over one user's 120 rows)."""

INSERT_SQL = (
    """
INSERT INTO memories (
    id, tenant_id, user_id, kind, category, content, context, outcome, source, origin,
    importance, confidence, trust, pinned, occurred_at, expires_at, status, provenance, tags,
    content_hash, embedding, embedding_model, own_embedding
) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
          $18::jsonb, $19, $20, $21, $22, $23)
RETURNING """
    + RECORD_COLUMNS
)


def new_id() -> str:
    """A fresh memory id (uuid4 hex, 32 chars)."""
    return uuid.uuid4().hex


def content_hash(content: str) -> str:
    """Hash of the normalised content, for exact-duplicate detection."""
    normalised = " ".join(content.lower().split())
    return hashlib.sha256(normalised.encode("utf-8")).hexdigest()


def vector_to_bytes(vector: np.ndarray) -> bytes:
    """Store a float32 vector compactly (384 dims → 1,536 bytes)."""
    return np.asarray(vector, dtype=np.float32).tobytes()


def vector_from_bytes(blob: bytes | None, dim: int) -> np.ndarray | None:
    """Read back a stored vector; None when missing or of another dimension."""
    if blob is None or len(blob) != dim * 4:
        return None
    return np.frombuffer(blob, dtype=np.float32)


def insert_params(
    mid: str,
    scope_tenant: str,
    scope_user: str,
    item: NewMemory,
    vector: np.ndarray,
    model: str,
    own: np.ndarray | None = None,
) -> tuple[Any, ...]:
    """Positional parameters for INSERT_SQL; `own` is the own-text vector, if it differs."""
    occurred = item.occurred_at or datetime.now(UTC)
    expires = occurred + timedelta(days=item.ttl_days) if item.ttl_days else None
    trust = str(item.provenance.get("trust", "normal"))
    return (
        mid,
        scope_tenant,
        scope_user,
        item.kind.value,
        item.category.value,
        item.content,
        item.context,
        item.outcome,
        item.source.value,
        item.origin.value,
        float(min(max(item.importance, 0.0), 1.0)),
        float(min(max(item.confidence, 0.0), 1.0)),
        trust,
        item.pinned,
        occurred,
        expires,
        item.status.value,
        json.dumps(item.provenance, ensure_ascii=False, default=str),
        list(item.tags),
        content_hash(item.content),
        vector_to_bytes(vector),
        model,
        vector_to_bytes(own) if own is not None else None,
    )


def record_from_row(row: Any) -> MemoryRecord:
    """Build a MemoryRecord from an asyncpg Record selected with RECORD_COLUMNS."""
    provenance = row["provenance"]
    if isinstance(provenance, str):
        provenance = json.loads(provenance)
    return MemoryRecord(
        id=row["id"],
        tenant_id=row["tenant_id"],
        user_id=row["user_id"],
        kind=MemoryKind(row["kind"]),
        content=row["content"],
        source=Source(row["source"]),
        origin=Origin(row["origin"]),
        category=Category(row["category"]),
        importance=float(row["importance"]),
        confidence=float(row["confidence"]),
        created_at=row["created_at"],
        occurred_at=row["occurred_at"],
        expires_at=row["expires_at"],
        access_count=int(row["access_count"]),
        last_accessed=row["last_accessed"],
        status=Status(row["status"]),
        superseded_by=row["superseded_by"],
        provenance=dict(provenance or {}),
        content_hash=row["content_hash"],
        version=int(row["version"]),
        indexed_at=row["indexed_at"],
        pinned=bool(row["pinned"]),
        context=row["context"],
        outcome=row["outcome"],
        tags=list(row["tags"] or []),
        valid_from=row["valid_from"],
        valid_to=row["valid_to"],
    )


def record_snapshot(record: MemoryRecord) -> dict[str, Any]:
    """A JSON-able snapshot of a record, for the version history and exports."""
    out: dict[str, Any] = {}
    for name in MemoryRecord.__slots__:
        value = getattr(record, name)
        if isinstance(value, datetime):
            value = value.isoformat()
        elif hasattr(value, "value"):
            value = value.value
        out[name] = value
    return out
