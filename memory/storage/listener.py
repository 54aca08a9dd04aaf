"""One PostgreSQL LISTEN connection per process, shared by the agent bus and cache invalidation.

asyncpg delivers notifications on the connection that ran LISTEN, so that connection is held for
the listener's lifetime. Multiplexing every channel onto one connection costs one connection per
process instead of one per subscriber (the pool holds 10). If the connection drops, it is
re-opened with backoff, every channel is listened to again, and `on_reconnect` callbacks run:
notifications sent in between are lost, so callers re-read their durable state (the bus reads
rows after its cursor, the caches are cleared).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from tenacity import AsyncRetrying, RetryCallState, RetryError, wait_exponential

from memory.storage.db import Connection, Database

log = logging.getLogger(__name__)

Callback = Callable[[str, str], None]  # (channel, payload); must not block

_FIRST_BACKOFF_S = 0.1
_MAX_BACKOFF_S = 5.0


def _log_retry(state: RetryCallState) -> None:
    exc = state.outcome.exception() if state.outcome is not None else None
    delay = state.next_action.sleep if state.next_action is not None else 0.0
    log.warning("LISTEN reconnect failed (%s); retrying in %.1fs", exc, delay)


class PgListener:
    """LISTEN on any number of channels over one pooled connection."""

    def __init__(self, pool: Database) -> None:
        self._pool = pool
        self._conn: Connection | None = None
        self._callbacks: dict[str, list[Callback]] = {}
        self._on_reconnect: list[Callable[[], None]] = []
        self._lock = asyncio.Lock()
        self._reconnect_task: asyncio.Task[None] | None = None
        self._closed = False
        self.reconnects = 0

    @property
    def backend_pid(self) -> int | None:
        """The server process id of the listening connection (None when not connected)."""
        return None if self._conn is None else int(self._conn.get_server_pid())

    def on_reconnect(self, callback: Callable[[], None]) -> None:
        """Call `callback` after the connection was lost and re-established."""
        self._on_reconnect.append(callback)

    def off_reconnect(self, callback: Callable[[], None]) -> None:
        """Forget a callback given to `on_reconnect`."""
        if callback in self._on_reconnect:
            self._on_reconnect.remove(callback)

    async def listen(self, channel: str, callback: Callback) -> None:
        """Deliver notifications on `channel` to `callback` (LISTEN is issued once per channel)."""
        async with self._lock:
            if self._closed:
                raise RuntimeError("listener is closed")
            await self._connect()
            callbacks = self._callbacks.setdefault(channel, [])
            if not callbacks:
                assert self._conn is not None  # _connect() holds one or raised
                await self._conn.add_listener(channel, self._dispatch)
            callbacks.append(callback)

    async def unlisten(self, channel: str, callback: Callback) -> None:
        """Stop delivering `channel` to `callback`; UNLISTEN when nobody is left."""
        async with self._lock:
            callbacks = self._callbacks.get(channel, [])
            if callback in callbacks:
                callbacks.remove(callback)
            if callbacks or channel not in self._callbacks:
                return
            del self._callbacks[channel]
            if self._conn is not None and not self._conn.is_closed():
                await self._conn.remove_listener(channel, self._dispatch)

    async def close(self) -> None:
        """Release the connection (its pool reset issues UNLISTEN *)."""
        self._closed = True
        if self._reconnect_task is not None:
            self._reconnect_task.cancel()
            await asyncio.gather(self._reconnect_task, return_exceptions=True)
        async with self._lock:
            self._callbacks.clear()
            await self._release()

    # -- internals -------------------------------------------------------------------------

    def _dispatch(self, _conn: Any, _pid: int, channel: str, payload: str) -> None:
        for callback in list(self._callbacks.get(channel, ())):
            try:
                callback(channel, payload)
            except Exception:  # one bad subscriber must not silence the others
                log.exception("notification callback failed on %s", channel)

    async def _connect(self) -> None:
        if self._conn is None:
            self._conn = await self._pool.acquire()
            self._conn.add_termination_listener(self._terminated)

    async def _release(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:
            conn.remove_termination_listener(self._terminated)
            await self._pool.release(conn)
        except Exception as exc:  # a dead connection was already given back to the pool
            log.debug("releasing the listen connection: %s", exc)

    async def _listen_again(self) -> None:
        try:
            await self._connect()
            assert self._conn is not None  # _connect() holds one or raised
            for channel in self._callbacks:
                await self._conn.add_listener(channel, self._dispatch)
        except Exception:
            await self._release()
            raise

    def _terminated(self, _conn: Any) -> None:
        if self._closed or (self._reconnect_task and not self._reconnect_task.done()):
            return
        log.warning("LISTEN connection lost; reconnecting")
        self._reconnect_task = asyncio.get_running_loop().create_task(self._reconnect())

    async def _reconnect(self) -> None:
        async with self._lock:
            await self._release()
            try:
                # Any failure (the server restarting) is retried with backoff until closed.
                async for attempt in AsyncRetrying(
                    wait=wait_exponential(multiplier=_FIRST_BACKOFF_S, max=_MAX_BACKOFF_S),
                    stop=lambda _state: self._closed,
                    before_sleep=_log_retry,
                ):
                    if self._closed:
                        break
                    with attempt:
                        await self._listen_again()
            except RetryError:
                pass  # closed while reconnecting
        self.reconnects += 1
        for callback in list(self._on_reconnect):
            callback()
