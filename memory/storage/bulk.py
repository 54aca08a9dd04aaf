"""Loading many memories at once with COPY (benchmarks of synthetic corpora at 1M rows).

`write_many` inserts row by row inside one transaction, with an audit event each (~1 ms a row):
fine for a conversation, hours for a million rows. `copy_memories` streams rows with Postgres's
binary COPY instead (generated columns such as `tsv` and `cjk_grams` are computed by Postgres
as usual), then advances each user's data version once, so caches see the change. No audit
events are written: this is for corpora that were never a user's conversation.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from memory.storage.db import Database
from memory.storage.rows import content_hash, vector_to_bytes
from memory.types import Scope

_COLUMNS = (
    "id", "tenant_id", "user_id", "kind", "category", "content", "context", "source", "origin",
    "importance", "confidence", "occurred_at", "provenance", "content_hash", "embedding",
    "embedding_model", "indexed_at", "recall_features", "own_embedding",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class BulkMemory:
    """One episodic fact to load: its owner, id, text, time, vector and recall features."""

    scope: Scope
    id: str
    content: str
    occurred_at: datetime
    vector: np.ndarray
    recall_features: str | None = None  # JSON, as `memory.recall.features.encode` writes it
    importance: float = 0.5
    # The own-text vector when `vector` was computed with context (`MemoryStore.embed_memories`);
    # None: `vector` is the own text's (these facts are loaded without context).
    own_vector: np.ndarray | None = None


async def copy_memories(
    pool: Database, items: Sequence[BulkMemory], *, model: str, indexed_at: datetime | None
) -> None:
    """COPY `items` into `memories` in one transaction and bump each owner's version once.

    `indexed_at` marks them as already in Chroma (the caller indexed them) or, None, as owed
    to it (`reindex` picks them up).
    """
    rows: Iterable[tuple[object, ...]] = (
        (
            m.id, m.scope.tenant_id, m.scope.user_id, "episodic", "fact", m.content, "", "chat",
            "inferred", m.importance, 0.8, m.occurred_at, json.dumps({"bulk": True}),
            content_hash(m.content), vector_to_bytes(m.vector), model, indexed_at,
            m.recall_features,
            vector_to_bytes(m.own_vector) if m.own_vector is not None else None,
        )
        for m in items
    )  # fmt: skip
    owners = sorted({(m.scope.tenant_id, m.scope.user_id) for m in items})
    async with pool.acquire() as conn, conn.transaction():
        await conn.copy_records_to_table("memories", records=rows, columns=_COLUMNS)
        await conn.execute(
            "INSERT INTO scope_versions (tenant_id, user_id, version)"
            " SELECT t, u, nextval('scope_epoch_seq') * 4294967296"
            " FROM unnest($1::text[], $2::text[]) AS o (t, u)"
            " ON CONFLICT (tenant_id, user_id) DO UPDATE SET version = scope_versions.version + 1",
            [t for t, _ in owners],
            [u for _, u in owners],
        )


async def analyze(pool: Database) -> None:
    """Refresh the planner's statistics of `memories` after a bulk load.

    Until autovacuum does it, the planner takes a freshly loaded user for a handful of rows and
    plans recall's candidate query as a scan of all of them.
    """
    async with pool.acquire() as conn:
        await conn.execute("ANALYZE memories")


__all__ = ["BulkMemory", "analyze", "copy_memories"]
