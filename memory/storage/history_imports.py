"""Where a bulk import of past conversations stands, read back from the stored memories.

Each imported memory records `{"import": {"source": <digest>, "index": <message number>}}` in
its provenance, and batches are written in order, so the highest index stored for a source is
where a rerun of the same import resumes.
"""

from __future__ import annotations

from memory.storage.db import Database
from memory.types import Scope


async def imported_up_to(pool: Database, scope: Scope, source: str) -> int:
    """The highest message index of `source` already stored for this user (-1 for none)."""
    async with pool.acquire() as conn:
        value = await conn.fetchval(
            "SELECT max((provenance->'import'->>'index')::int) FROM memories"
            " WHERE tenant_id = $1 AND user_id = $2 AND provenance->'import'->>'source' = $3",
            scope.tenant_id,
            scope.user_id,
            source,
        )
    return -1 if value is None else int(value)


__all__ = ["imported_up_to"]
