"""A run's checkpoints: found by the run's id, deleted with the run, never another thread's.

The server deletes a run's checkpoints when a client deletes the run
(`DELETE /threads/{thread_id}/runs/{run_id}`) and when a `rollback` double-text cancels one. It
checks that the caller owns the thread named in the path, then asks the checkpointer to delete
the checkpoints of the run id, whichever thread they are on, before it looks whether that run
is on that thread at all. So a user naming their own thread and another user's run id would
delete the other user's working memory: `run_on_another_thread` is what the auth handler asks
first. The run id sits in each checkpoint's metadata (LangGraph copies the run's metadata
there); an index on it makes both the check and the deletion a lookup, not a scan of every
thread's checkpoints.
"""

from __future__ import annotations

from memory.storage.db import Database
from memory.storage.tombstones import MIGRATIONS_LOCK_KEY

# Run by the checkpointer after LangGraph created its tables (psycopg), under the migrations'
# lock: two processes starting at once would otherwise both try to create it.
RUN_INDEX_SQL = f"""
DO $$ BEGIN
    PERFORM pg_advisory_xact_lock({MIGRATIONS_LOCK_KEY});
    CREATE INDEX IF NOT EXISTS checkpoints_by_run ON checkpoints ((metadata ->> 'run_id'));
END $$
"""

# One statement, so one snapshot and all or nothing (psycopg, `%s` the run ids as text[]): the
# runs' checkpoints, the writes pending on them, and the channel values only they referred to.
# A value a kept checkpoint still refers to (a channel the run did not change) stays.
DELETE_RUNS_SQL = """
WITH gone AS (
    DELETE FROM checkpoints WHERE metadata ->> 'run_id' = ANY(%s)
    RETURNING thread_id, checkpoint_ns, checkpoint_id, checkpoint -> 'channel_versions' AS versions
), writes AS (
    DELETE FROM checkpoint_writes w USING gone g
    WHERE w.thread_id = g.thread_id AND w.checkpoint_ns = g.checkpoint_ns
      AND w.checkpoint_id = g.checkpoint_id
), held AS (
    SELECT DISTINCT g.thread_id, g.checkpoint_ns, v.key AS channel, v.value #>> '{}' AS version
    FROM gone g CROSS JOIN LATERAL jsonb_each(coalesce(g.versions, '{}')) v
)
DELETE FROM checkpoint_blobs b USING held h
WHERE b.thread_id = h.thread_id AND b.checkpoint_ns = h.checkpoint_ns
  AND b.channel = h.channel AND b.version = h.version
  AND NOT EXISTS (
      SELECT 1 FROM checkpoints c
      WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns
        AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version
        AND coalesce(c.metadata ->> 'run_id', '') <> ALL(%s)
  )
"""


async def run_on_another_thread(pool: Database, run_id: str, thread_id: str) -> bool:
    """Whether any checkpoint of run `run_id` belongs to a thread other than `thread_id`."""
    async with pool.acquire() as conn:
        # Absent until a checkpointer has set up its tables on this database.
        if not await conn.fetchval("SELECT to_regclass('checkpoints') IS NOT NULL"):
            return False
        found = await conn.fetchval(
            "SELECT EXISTS (SELECT 1 FROM checkpoints"
            " WHERE metadata ->> 'run_id' = $1 AND thread_id <> $2)",
            run_id,
            thread_id,
        )
    return bool(found)


__all__ = ["DELETE_RUNS_SQL", "RUN_INDEX_SQL", "run_on_another_thread"]
