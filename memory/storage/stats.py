"""Aggregate reads for metrics and the admin pages: sizes, counts, hit rate and pollution.

Aggregates only (counts and sizes, never content), optionally for one tenant. These are admin
reads across users, like `reindex`; no user-facing API exposes them. Each function takes an open
connection (`store.pool.acquire()`), so a caller can run several on one.
"""

from __future__ import annotations

from typing import Any

from memory.storage.db import Connection

# Our tables, plus the LangGraph Postgres checkpointer's (working memory) when present.
TABLES = (
    "memories", "memory_events", "memory_images", "memory_versions", "scope_versions",
    "user_settings", "user_threads", "consolidation_runs", "agent_events", "agent_cursors",
    "schema_migrations",
    "checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations",
)  # fmt: skip
# A stored memory "polluted" the store when it was later superseded, deleted or flagged.
POLLUTION_REASONS = ("superseded", "deleted", "flagged")


async def table_sizes(conn: Connection) -> dict[str, int]:
    """pg_total_relation_size (heap + indexes + TOAST) of each of our tables that exists."""
    rows = await conn.fetch(
        "SELECT c.relname, pg_total_relation_size(c.oid) AS bytes FROM pg_class c"
        " JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')"
        " AND c.relname = ANY($1::text[]) ORDER BY c.relname",
        list(TABLES),
    )
    return {r["relname"]: int(r["bytes"]) for r in rows}


async def memory_counts(conn: Connection, tenant: str | None) -> list[tuple[str, str, int]]:
    """(kind, status, count) of the memories table."""
    rows = await conn.fetch(
        "SELECT kind, status, count(*) AS n FROM memories"
        " WHERE ($1::text IS NULL OR tenant_id = $1) GROUP BY kind, status ORDER BY kind, status",
        tenant,
    )
    return [(r["kind"], r["status"], int(r["n"])) for r in rows]


async def injection_usage(conn: Connection, tenant: str | None) -> dict[str, Any]:
    """Turns with an `injection` event, memories injected and used, and their ratio."""
    row = await conn.fetchrow(
        "SELECT count(*) AS turns,"
        " coalesce(sum(jsonb_array_length(CASE WHEN jsonb_typeof(detail->'injected') = 'array'"
        "   THEN detail->'injected' ELSE '[]'::jsonb END)), 0) AS injected,"
        " coalesce(sum(jsonb_array_length(CASE WHEN jsonb_typeof(detail->'used') = 'array'"
        "   THEN detail->'used' ELSE '[]'::jsonb END)), 0) AS used"
        " FROM memory_events WHERE event = 'injection' AND ($1::text IS NULL OR tenant_id = $1)",
        tenant,
    )
    assert row is not None  # an aggregate always yields one row
    injected, used = int(row["injected"]), int(row["used"])
    return {
        "turns": int(row["turns"]),
        "injected": injected,
        "used": used,
        "hit_rate": used / injected if injected else None,
    }


async def pollution(conn: Connection, tenant: str | None) -> dict[str, Any]:
    """Of the memories ever written, how many were later superseded, deleted or flagged.

    Read from the rows' state where it survives (status, the `conflict` tag) and from the audit
    log where the row is gone (`delete`) or a reviewer flagged it (`flagged`), so it does not
    depend on which event name each write path used for a supersession.
    """
    rows = await conn.fetch(
        "WITH stored AS (SELECT DISTINCT memory_id AS id FROM memory_events WHERE event = 'write'"
        "   AND memory_id IS NOT NULL AND ($1::text IS NULL OR tenant_id = $1)),"
        " bad AS ("
        "   SELECT m.id, 'superseded' AS why FROM memories m JOIN stored USING (id)"
        "     WHERE m.status = 'superseded'"
        "   UNION SELECT m.id, 'flagged' FROM memories m JOIN stored USING (id)"
        "     WHERE 'conflict' = ANY(m.tags)"
        "   UNION SELECT e.memory_id, CASE e.event WHEN 'delete' THEN 'deleted' ELSE e.event END"
        "     FROM memory_events e JOIN stored s ON s.id = e.memory_id"
        "     WHERE e.event IN ('delete', 'flagged'))"
        " SELECT 'stored' AS what, count(*) AS n FROM stored"
        " UNION ALL SELECT 'polluted', count(DISTINCT id) FROM bad"
        " UNION ALL SELECT why, count(DISTINCT id) FROM bad GROUP BY why",
        tenant,
    )
    counts = {r["what"]: int(r["n"]) for r in rows}
    stored, polluted = counts.pop("stored", 0), counts.pop("polluted", 0)
    return {
        "stored": stored,
        "polluted": polluted,
        "rate": polluted / stored if stored else None,
        "by_reason": {why: counts.get(why, 0) for why in POLLUTION_REASONS},
    }


async def agent_event_counts(conn: Connection, tenant: str | None) -> dict[str, int]:
    """Published agent events per type."""
    rows = await conn.fetch(
        "SELECT event_type, count(*) AS n FROM agent_events"
        " WHERE ($1::text IS NULL OR tenant_id = $1) GROUP BY event_type ORDER BY event_type",
        tenant,
    )
    return {r["event_type"]: int(r["n"]) for r in rows}


async def image_counts(conn: Connection, tenant: str | None) -> dict[str, int]:
    """Image memories and the bytes kept of them (thumbnails), optionally for one tenant."""
    if await conn.fetchval("SELECT to_regclass('memory_images')") is None:
        return {"images": 0, "kept_bytes": 0}
    row = await conn.fetchrow(
        "SELECT count(*) AS n, coalesce(sum(octet_length(thumbnail)), 0) AS kept"
        " FROM memory_images WHERE ($1::text IS NULL OR tenant_id = $1)",
        tenant,
    )
    assert row is not None  # an aggregate always yields one row
    return {"images": int(row["n"]), "kept_bytes": int(row["kept"])}


__all__ = [
    "POLLUTION_REASONS",
    "TABLES",
    "agent_event_counts",
    "image_counts",
    "injection_usage",
    "memory_counts",
    "pollution",
    "table_sizes",
]
