"""A reindex that proves its work: what Postgres marks indexed is read back from Chroma.

`indexed_at` says a row's upsert returned, and an upsert can return without Chroma keeping the
entry: a Chroma server restarted on an empty folder or wiped, an embedded Chroma another
process overwrote. A reindex that only indexed `indexed_at IS NULL` rows then reported success
("indexed 3 memories") while Chroma held none of the user's entries, and recall's dense leg
silently lost them. `reindex_checked` first reads back, by id in pages, every row marked
indexed, marks the ones Chroma lacks unindexed, then indexes every unindexed row (each batch
read back again by `MemoryStore.index_batch`), and reports the counts it checked.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from memory.storage.rows import RECORD_COLUMNS, record_from_row
from memory.storage.store import MemoryStore

# Rows read back per Chroma `get`: one page of ids and their 384-float vectors (~1 MB).
CHECK_PAGE = 500


@dataclass(frozen=True, slots=True)
class ReindexReport:
    """What a checked reindex found and did."""

    checked: int  # rows marked indexed that were read back from Chroma
    lost: int  # of those, missing from Chroma: marked unindexed and indexed again
    verified: int  # rows upserted and then read back from Chroma: now marked indexed
    missing: int  # rows upserted that Chroma did not keep: left unindexed (pending)
    pending: int  # rows still unindexed after the run (missing ones, or Chroma went down)
    chroma_down: bool  # Chroma stopped answering during the run

    @property
    def ok(self) -> bool:
        """Chroma answered and kept every row this run upserted.

        `pending` is not part of it: rows other writers add during the run are pending too.
        """
        return not self.missing and not self.chroma_down

    def to_dict(self) -> dict[str, Any]:
        """The counts, for JSON output."""
        return {**asdict(self), "ok": self.ok}


async def verify_indexed(
    store: MemoryStore, *, tenant: str | None = None, page: int = CHECK_PAGE
) -> tuple[int, int]:
    """Read back every row marked indexed (of `tenant`, or all); unmark those Chroma lacks.

    Returns (rows checked, rows found missing). Raises `VectorIndexError` when Chroma is down.
    A row marked again after the read began (another writer indexed it meanwhile) is left as
    it is: the comparison with the time the page was read keeps its newer mark.
    """
    after, checked, lost = "", 0, 0
    while True:
        async with store.pool.acquire() as conn:
            seen = await conn.fetchval("SELECT now()")
            rows = await conn.fetch(
                f"SELECT {RECORD_COLUMNS} FROM memories WHERE id > $1"
                " AND indexed_at IS NOT NULL AND status <> 'deleted'"
                " AND ($3::text IS NULL OR tenant_id = $3) ORDER BY id LIMIT $2",
                after,
                page,
                tenant,
            )
        if not rows:
            return checked, lost
        records = [record_from_row(r) for r in rows]
        after = records[-1].id
        held = await store.index.held(records)
        gone = [r.id for r in records if r.id not in held]
        checked += len(records)
        if gone:
            async with store.pool.acquire() as conn:
                unmarked = await conn.fetch(
                    "UPDATE memories SET indexed_at = NULL WHERE id = ANY($1::text[])"
                    " AND indexed_at <= $2 RETURNING id",
                    gone,
                    seen,
                )
            lost += len(unmarked)


async def reindex_checked(store: MemoryStore, *, tenant: str | None = None) -> ReindexReport:
    """Verify what is marked indexed, index what is not, and report what was checked.

    `tenant` limits the read-back and the counts reported to one tenant (an admin's); the
    indexing of unindexed rows is the whole store's, as `MemoryStore.reindex` always was.
    Raises `VectorIndexError` when Chroma is down before anything could be checked.
    """
    checked, lost = await verify_indexed(store, tenant=tenant)
    missing: set[str] = set()
    async with store.pool.acquire() as conn:
        started = await conn.fetchval("SELECT now()")
    # Verified: marked from here on, which `index_batch` does only after reading Chroma back.
    await store.reindex(missing=missing)
    async with store.pool.acquire() as conn:
        counts = await conn.fetchrow(
            "SELECT count(*) FILTER (WHERE indexed_at IS NULL) AS pending,"
            " count(*) FILTER (WHERE id = ANY($2::text[]) AND indexed_at IS NULL) AS missing,"
            " count(*) FILTER (WHERE indexed_at >= $3) AS verified"
            " FROM memories WHERE status <> 'deleted' AND ($1::text IS NULL OR tenant_id = $1)",
            tenant,
            list(missing),
            started,
        )
    assert counts is not None  # an aggregate always returns one row
    return ReindexReport(
        checked=checked,
        lost=lost,
        verified=int(counts["verified"]),
        missing=int(counts["missing"]),
        pending=int(counts["pending"]),
        chroma_down=store.index_health.down_since is not None,
    )


__all__ = ["CHECK_PAGE", "ReindexReport", "reindex_checked", "verify_indexed"]
