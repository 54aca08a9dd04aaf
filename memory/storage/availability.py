"""Tell a store that is down apart from a bug, so callers get "try again" instead of a 500.

A Postgres restart, a failover or a network cut surfaces as one of a dozen exception types
(refused sockets, asyncpg's connection errors, psycopg's `OperationalError`, a pool that cannot
hand out a connection). All of them mean the same thing to a user: the memory store is
unavailable, nothing of this request was written, retry shortly.
"""

from __future__ import annotations

import errno
import socket

import asyncpg
import psycopg
import psycopg_pool

RETRY_AFTER_S = 5
"""What `Retry-After` suggests: a restarting Postgres is usually back within a few seconds."""

_UNAVAILABLE: tuple[type[BaseException], ...] = (
    ConnectionError,  # refused, reset, aborted
    asyncpg.PostgresConnectionError,  # SQLSTATE class 08, connection does not exist
    asyncpg.CannotConnectNowError,  # 57P03: starting up or shutting down
    asyncpg.AdminShutdownError,  # 57P01
    asyncpg.CrashShutdownError,  # 57P02
    asyncpg.InterfaceError,  # "connection is closed", "pool is closing"
    psycopg.OperationalError,  # the checkpointer's driver: connection lost or refused
    psycopg_pool.PoolTimeout,  # no connection could be made within the pool's timeout
    socket.gaierror,  # the database host name does not resolve (DNS down)
)
_NETWORK_ERRNOS = frozenset(
    {errno.ECONNREFUSED, errno.ECONNRESET, errno.EHOSTUNREACH, errno.ENETUNREACH, errno.ETIMEDOUT}
)


class MemoryStoreUnavailable(RuntimeError):
    """The memory store (Postgres) cannot be reached; nothing of the request was written."""

    def __init__(self, detail: str = "") -> None:
        """A message that says what happened and what to do, without connection details."""
        message = "memory store unavailable: the database cannot be reached; retry shortly"
        super().__init__(f"{message} ({detail})" if detail else message)
        self.retry_after_s = RETRY_AFTER_S


def is_unavailable(exc: BaseException) -> bool:
    """True when `exc`, or an exception it was raised from, means the store is down."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, (MemoryStoreUnavailable, *_UNAVAILABLE)):
            return True
        if isinstance(current, OSError) and (
            current.errno in _NETWORK_ERRNOS or str(current).startswith("Multiple exceptions")
        ):
            return True  # unreachable host; asyncio's "Multiple exceptions" for ::1 + 127.0.0.1
        current = current.__cause__ or current.__context__
    return False


def unavailable_from(exc: BaseException) -> MemoryStoreUnavailable:
    """The `MemoryStoreUnavailable` to raise in place of `exc` (its type names the cause)."""
    if isinstance(exc, MemoryStoreUnavailable):
        return exc
    return MemoryStoreUnavailable(type(exc).__name__)


__all__ = ["RETRY_AFTER_S", "MemoryStoreUnavailable", "is_unavailable", "unavailable_from"]
