"""Working memory persistence: an `AsyncPostgresSaver` on the same database as the memories.

Used by `langgraph dev` / LangGraph Platform through `langgraph.json` (`checkpointer.path`) and by
the CLI, so a thread's working memory (turns, summary, task state, scratchpad) survives restarts.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from memory.settings import Settings, apply_privacy_defaults
from memory.storage.pg import database_url, release_embedded_databases


@asynccontextmanager
async def open_checkpointer(
    settings: Settings | None = None, *, max_size: int = 10
) -> AsyncIterator[AsyncPostgresSaver]:
    """A set-up Postgres checkpointer on a connection pool, closed on exit."""
    apply_privacy_defaults()
    settings = settings or Settings.from_env()
    url = await asyncio.to_thread(database_url, settings)
    # autocommit + prepare_threshold=0: what the saver expects, and safe behind pgbouncer.
    kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    async with AsyncConnectionPool(
        url, min_size=1, max_size=max_size, kwargs=kwargs, open=False
    ) as pool:
        saver = AsyncPostgresSaver(pool)  # type: ignore[arg-type]
        await saver.setup()
        yield saver


@asynccontextmanager
async def make_checkpointer() -> AsyncIterator[AsyncPostgresSaver]:
    """Entry point named in `langgraph.json` (`checkpointer.path`): lives as long as the server.

    When the server stops, the memory stores its runs opened are closed and its handle on the
    embedded PostgreSQL is released, so the database stops with the last process that uses it
    instead of outliving `langgraph dev`.
    """
    from agent.resources import close_all_stores

    try:
        async with open_checkpointer() as saver:
            yield saver
    finally:
        try:
            await close_all_stores()
        finally:
            await asyncio.to_thread(release_embedded_databases)
