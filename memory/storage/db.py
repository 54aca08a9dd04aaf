"""A typed face over asyncpg's pool: what storage code may call on a pool and a connection.

asyncpg ships no type information, so without this every pool and connection is `Any` and a
misspelt method is found at run time. `Database` wraps the pool and only forwards; the
connections it hands out are asyncpg's own, typed by the `Connection` protocol. Rows are
`asyncpg.Record`, read by column name (`Row`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Generator, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Protocol

Row = Mapping[str, Any]


class Connection(Protocol):
    """The asyncpg connection methods storage uses."""

    async def fetch(self, query: str, *args: Any, timeout: float | None = None) -> list[Row]:
        """All rows of a query."""
        ...

    async def fetchrow(self, query: str, *args: Any, timeout: float | None = None) -> Row | None:
        """The first row of a query, or None."""
        ...

    async def fetchval(self, query: str, *args: Any, timeout: float | None = None) -> Any:
        """The first column of the first row, or None."""
        ...

    async def execute(self, query: str, *args: Any, timeout: float | None = None) -> str:
        """Run a statement; returns its status tag, e.g. "DELETE 3"."""
        ...

    async def executemany(
        self, command: str, args: Iterable[Sequence[Any]], *, timeout: float | None = None
    ) -> None:
        """Run a statement once per argument tuple."""
        ...

    async def copy_records_to_table(
        self, table_name: str, *, records: Iterable[Sequence[Any]], columns: Sequence[str]
    ) -> str:
        """COPY rows into a table (binary protocol); returns the status tag."""
        ...

    def transaction(self) -> AbstractAsyncContextManager[Any]:
        """A transaction block (`async with conn.transaction():`)."""
        ...

    async def add_listener(self, channel: str, callback: Callable[..., None]) -> None:
        """LISTEN on `channel`."""
        ...

    async def remove_listener(self, channel: str, callback: Callable[..., None]) -> None:
        """UNLISTEN `channel`."""
        ...

    def add_termination_listener(self, callback: Callable[..., None]) -> None:
        """Call `callback` when the connection closes."""
        ...

    def remove_termination_listener(self, callback: Callable[..., None]) -> None:
        """Stop calling `callback` on close."""
        ...

    def is_closed(self) -> bool:
        """Whether the connection is closed."""
        ...

    def get_server_pid(self) -> int:
        """The server process serving this connection."""
        ...


class Acquire(Protocol):
    """asyncpg's acquire context: `async with pool.acquire() as conn` or `await pool.acquire()`."""

    async def __aenter__(self) -> Connection: ...

    async def __aexit__(self, *exc: object) -> None: ...

    def __await__(self) -> Generator[Any, None, Connection]: ...


class Database:
    """An asyncpg pool, typed; `acquire()` as asyncpg's, plus one-statement shortcuts."""

    def __init__(self, pool: Any) -> None:
        self._pool = pool

    def acquire(self) -> Acquire:
        """A pooled connection (release it with `release`, or use `async with`)."""
        acquire: Acquire = self._pool.acquire()
        return acquire

    async def release(self, conn: Connection) -> None:
        """Return a connection taken with `await acquire()`."""
        await self._pool.release(conn)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Connection]:
        """A pooled connection inside a transaction, committed on a clean exit."""
        async with self.acquire() as conn, conn.transaction():
            yield conn

    async def fetch(self, query: str, *args: Any) -> list[Row]:
        """All rows of one query on a pooled connection."""
        async with self.acquire() as conn:
            return await conn.fetch(query, *args)

    async def fetchrow(self, query: str, *args: Any) -> Row | None:
        """The first row of one query on a pooled connection."""
        async with self.acquire() as conn:
            return await conn.fetchrow(query, *args)

    async def fetchval(self, query: str, *args: Any) -> Any:
        """The first value of one query on a pooled connection."""
        async with self.acquire() as conn:
            return await conn.fetchval(query, *args)

    async def execute(self, query: str, *args: Any) -> str:
        """Run one statement on a pooled connection; its status tag."""
        async with self.acquire() as conn:
            return await conn.execute(query, *args)

    def get_max_size(self) -> int:
        """The most connections the pool opens."""
        return int(self._pool.get_max_size())

    async def close(self) -> None:
        """Close every connection."""
        await self._pool.close()


__all__ = ["Acquire", "Connection", "Database", "Row"]
