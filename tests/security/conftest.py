"""Fixtures shared by the security tests that read a Chroma server's files."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memory.settings import Settings
from memory.storage.store import open_store
from tests.support.chroma_server import ChromaServer
from tests.support.memory_stores import readable_server_settings, truncate


@pytest.fixture
async def readable_settings(
    pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path, chroma_server: ChromaServer
) -> AsyncIterator[Settings]:
    """A store on the module database and the shared Chroma server, whose files the test reads;
    every table and the deletion outbox emptied first."""
    settings = readable_server_settings(
        pg_db_url, tmp_data_dir, embedding_model_dir, chroma_server, prefix="sec"
    )
    async with open_store(settings) as store:
        await truncate(store)
        async with store.pool.acquire() as conn:
            await conn.execute("DELETE FROM deletion_outbox")
    yield settings
