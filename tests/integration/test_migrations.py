"""Schema migrations on a real PostgreSQL: a slow one completes instead of timing out."""

from __future__ import annotations

import asyncpg
import pytest

from memory.storage import migrations
from memory.storage.migrations import MIGRATIONS, apply_migrations

pytestmark = pytest.mark.asyncio


async def test_a_migration_longer_than_the_command_timeout_completes(
    pg_db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Indexing a large table takes minutes; the pool's per-command timeout (a minute) would
    # fail it on every start. Here the connection's timeout is 0.2 s and one migration 0.6 s.
    monkeypatch.setattr(migrations, "MIGRATIONS", [*MIGRATIONS, "SELECT pg_sleep(0.6)"])
    conn = await asyncpg.connect(pg_db_url, command_timeout=0.2)
    try:
        with pytest.raises(TimeoutError):
            await conn.execute("SELECT pg_sleep(0.6)")  # the timeout is real
        assert await apply_migrations(conn) == len(MIGRATIONS) + 1
        done = await conn.fetchval("SELECT max(version) FROM schema_migrations")
        assert done == len(MIGRATIONS) + 1
        assert await apply_migrations(conn) == 0
    finally:
        await conn.close()
