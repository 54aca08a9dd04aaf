"""Helpers for integration tests that open several MemoryStores on one database."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import asyncpg
import numpy as np
import pytest

from memory.settings import Settings
from memory.storage.migrations import MIGRATIONS
from memory.storage.rows import INSERT_SQL, insert_params
from memory.storage.store import MemoryStore, open_store
from memory.types import NewMemory, Scope
from tests.support.chroma_server import ChromaServer

# Every table a test of agents, caches or metrics may fill (they share a module database).
TABLES = (
    "memories, memory_images, memory_events, scope_versions, user_settings, memory_versions,"
    " agent_events, agent_cursors, consolidation_runs, user_threads, memory_store_keys,"
    " deletion_outbox, user_epochs, forgotten_threads"
)


def store_settings(url: str, data_dir: Path, model_dir: Path) -> Settings:
    """Settings for a store on `url` with embedded Chroma in `data_dir`."""
    return Settings(
        database_url=url,
        data_dir=data_dir,
        embedding_model_dir=model_dir,
        chroma_prefix="t" + data_dir.parent.name[-8:].replace("-", "_"),
    )


def server_settings(
    url: str, data_dir: Path, model_dir: Path, chroma_url: str, *, prefix: str, **extra: Any
) -> Settings:
    """Settings for a store on `url` against the shared `chroma run` server at `chroma_url`.

    Collections get a fresh `prefix`-ed name (the server outlives the test); the L2 candidate
    budget is 8 unless given, so a user of a few dozen memories is already a large one.
    """
    fields: dict[str, Any] = {"recall_l2_candidates": 8, **extra}
    return Settings(
        database_url=url,
        chroma_url=chroma_url,
        data_dir=data_dir,
        embedding_model_dir=model_dir,
        chroma_prefix=prefix + uuid.uuid4().hex[:12],
        **fields,
    )


def readable_server_settings(
    url: str, data_dir: Path, model_dir: Path, chroma: ChromaServer, *, prefix: str
) -> Settings:
    """Settings against the shared `chroma run` server, naming its folder so the store (and
    the test) can read and purge its files, as on a host that runs both."""
    return Settings(
        database_url=url,
        chroma_url=chroma.url,
        chroma_server_path=chroma.path,
        data_dir=data_dir,
        embedding_model_dir=model_dir,
        chroma_prefix=prefix + uuid.uuid4().hex[:8],
    )


def server_store_fixture(prefix: str) -> Callable[..., AsyncIterator[MemoryStore]]:
    """A `store` fixture: a store on the module database and the shared `chroma run` server,
    every table emptied first, with `server_settings` under `prefix`."""

    @pytest.fixture
    async def store(
        pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path, chroma_server: Any
    ) -> AsyncIterator[MemoryStore]:
        settings = server_settings(
            pg_db_url, tmp_data_dir, embedding_model_dir, chroma_server.url, prefix=prefix
        )
        async with open_store(settings) as opened:
            await truncate(opened)
            yield opened

    return store


async def open_stores(
    stack: AsyncExitStack, n: int, url: str, data_dir: Path, model_dir: Path
) -> list[MemoryStore]:
    """`n` stores, each with its own connection pool (as separate agents or workers would)."""
    settings = store_settings(url, data_dir, model_dir)
    return [await stack.enter_async_context(open_store(settings)) for _ in range(n)]


async def truncate(store: MemoryStore, *others: MemoryStore) -> None:
    """Empty the tables and every store's caches."""
    async with store.pool.acquire() as conn:
        await conn.execute(f"TRUNCATE {TABLES} RESTART IDENTITY")
    for s in (store, *others):
        s.cache.clear()


async def write_before_migration(
    url: str, version: int, rows: list[tuple[str, Scope, NewMemory]]
) -> None:
    """A database at schema `version` (migrations 1..version) holding `rows`, written then.

    For tests of a later migration on existing data; each row's vector is the first unit
    vector, written with today's insert as a database before `own_embedding` (migration 12)
    takes it.
    """
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(
            "CREATE TABLE schema_migrations (version integer PRIMARY KEY,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        for number, sql in enumerate(MIGRATIONS[:version], start=1):
            await conn.execute(sql)
            await conn.execute("INSERT INTO schema_migrations (version) VALUES ($1)", number)
        vector = np.zeros(384, dtype=np.float32)
        vector[0] = 1.0
        for mid, scope, memory in rows:
            params = insert_params(mid, scope.tenant_id, scope.user_id, memory, vector, "old")
            await conn.fetchrow(*_before_own_vectors(INSERT_SQL, params))
    finally:
        await conn.close()


def _before_own_vectors(sql: str, params: tuple[Any, ...]) -> tuple[Any, ...]:
    """`INSERT_SQL` and its parameters as a database without `own_embedding` takes them: the
    last column and parameter are dropped, and the validity window (migration 20) is not
    returned."""
    old = sql.replace(", own_embedding\n", "\n").replace(", $23)", ")")
    old = old.replace(", valid_from, valid_to", "")
    if old == sql:
        raise AssertionError("INSERT_SQL no longer ends with own_embedding; update this helper")
    return (old, *params[:-1])
