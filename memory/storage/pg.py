"""PostgreSQL connections: a configured server, or an embedded one in a local folder.

With no `DATABASE_URL`, a real PostgreSQL (the `pgserver` package ships its binaries) runs in
`MEMORY_DATA_DIR/pg`; every process that asks for it (the `langgraph dev` server, the CLI) shares
the same running instance, and it stops when the last of them exits.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import asyncpg

from memory.settings import Settings
from memory.storage.db import Database
from memory.storage.migrations import apply_migrations
from memory.storage.tombstones import declare_on_acquire

log = logging.getLogger(__name__)

_EMBEDDED: dict[str, Any] = {}
_EMBEDDED_LOCK = threading.Lock()


class DatabaseError(RuntimeError):
    """The database is unreachable or misconfigured; the message says what to check."""


def embedded_database_url(data_dir: Path) -> str:
    """Start (or join) the embedded PostgreSQL in `data_dir/pg` and return its URL."""
    pgdata = (data_dir / "pg").resolve()
    with _EMBEDDED_LOCK:
        if str(pgdata) not in _EMBEDDED:
            try:
                import pgserver
            except ImportError as exc:
                raise DatabaseError(
                    "No DATABASE_URL is set and the embedded PostgreSQL (the pgserver package) "
                    "is not installed: run `uv sync` (it installs it for local use), or "
                    "`pip install pgserver`, or set DATABASE_URL=postgresql://user:pass@host:5432/db."
                ) from exc
            pgdata.mkdir(parents=True, exist_ok=True)
            log.info("starting embedded PostgreSQL in %s", pgdata)
            _EMBEDDED[str(pgdata)] = pgserver.get_server(pgdata)  # type: ignore[attr-defined]
        return str(_EMBEDDED[str(pgdata)].get_uri())


def database_url(settings: Settings) -> str:
    """The configured database URL, or the embedded server's (never when deployed)."""
    if settings.database_url:
        return settings.database_url
    if not settings.embedded_allowed:
        raise DatabaseError(
            "No database URL is set, and under a deployed LangGraph server "
            f"(LANGSMITH_LANGGRAPH_API_VARIANT={settings.server_variant}) the embedded "
            "PostgreSQL is not started: set DATABASE_URL (or DATABASE_URI / POSTGRES_URI) to "
            "postgresql://user:pass@host:5432/db."
        )
    return embedded_database_url(settings.data_dir)


def release_embedded_databases() -> None:
    """Give up this process's handle on the embedded PostgreSQL; the last holder stops it.

    pgserver does this at interpreter exit, which a server stopped by a signal may not reach;
    the process that owns the server's lifetime calls this when it shuts down.
    """
    with _EMBEDDED_LOCK:
        servers = list(_EMBEDDED.values())
        _EMBEDDED.clear()
    for server in servers:
        try:
            server.cleanup()
        except Exception:  # stopping is best effort; a failure must not mask the shutdown
            log.warning("could not stop the embedded PostgreSQL", exc_info=True)


def _describe(url: str) -> str:
    # Never echo a password into logs or error messages.
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        return f"{scheme}://…@{rest.split('@', 1)[1]}"
    return url


@asynccontextmanager
async def open_pool(url: str, *, min_size: int = 1, max_size: int = 10) -> AsyncIterator[Database]:
    """An asyncpg pool with the schema migrated; a clear error if the server is down."""
    try:
        pool = await asyncpg.create_pool(
            url,
            min_size=min_size,
            max_size=max_size,
            command_timeout=60,
            timeout=10,
            # Postgres compiles a query whose estimated cost is high (a recall over a large
            # user's rows always is) to machine code first: measured at 60-110 ms a query on a
            # 200,000-memory user, for queries that then run in 10-30 ms. Every query here is
            # short and selective; none repays the compilation.
            server_settings={"jit": "off"},
            # Each connection carries the epochs its writers started at (forget-me finality).
            setup=declare_on_acquire,
        )
    except (OSError, asyncpg.PostgresError, TimeoutError) as exc:
        raise DatabaseError(
            f"Cannot connect to PostgreSQL at {_describe(url)}: {exc}. Check DATABASE_URL, or "
            "unset it to use the embedded database."
        ) from exc
    try:
        async with pool.acquire() as conn:
            await apply_migrations(conn)
        yield Database(pool)
    finally:
        await pool.close()
