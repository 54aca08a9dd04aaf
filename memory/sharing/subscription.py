"""One agent's subscription to its tenant's events: a cursor over `agent_events`, woken by NOTIFY.

Delivery is at-least-once: an event is acknowledged (the cursor saved) when the next one is asked
for, so an event whose handler crashed is delivered again after a restart.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Collection
from types import TracebackType

from memory.sharing.events import Event, EventSource, channel_for


class Subscription:
    """An async iterator of other agents' events; `start()` it before relying on delivery."""

    def __init__(
        self,
        bus: EventSource,
        tenant_id: str,
        agent_id: str,
        event_types: Collection[str] | None,
        *,
        since: int | None,
        poll_s: float,
    ) -> None:
        self._bus = bus
        self.tenant_id = tenant_id
        self.agent_id = agent_id
        self._wanted = None if event_types is None else frozenset(event_types)
        self._since = since
        self._poll_s = poll_s
        self._channel = channel_for(tenant_id)
        self._bell = asyncio.Event()
        self._buffer: deque[Event] = deque()
        self._cursor = 0
        self._unacked: int | None = None
        self._started = False
        self._closed = False

    async def start(self) -> Subscription:
        """LISTEN and position the cursor (idempotent); events committed after this arrive."""
        if self._started:
            return self
        # LISTEN before reading the cursor: anything committed in between is read, not missed.
        await self._bus.listener.listen(self._channel, self._ring)
        self._bus.listener.on_reconnect(self._bell.set)  # notifications may have been lost
        self._started = True
        self._cursor = await self._initial_cursor()
        return self

    async def close(self, *, ack: bool = True) -> None:
        """Stop listening; acknowledge the last event unless its handler failed (`ack=False`)."""
        if self._closed:
            return
        self._closed = True
        if ack:
            await self._ack()
        if self._started:
            self._bus.listener.off_reconnect(self._bell.set)
            await self._bus.listener.unlisten(self._channel, self._ring)
        self._bell.set()

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Event:
        await self.start()
        await self._ack()
        while not self._closed:
            if self._buffer:
                event = self._buffer.popleft()
                self._unacked = event.id
                return event
            self._bell.clear()
            batch = await self._bus.scan(self.tenant_id, self._cursor)
            if batch:
                self._cursor = batch[-1].id
                self._buffer.extend(e for e in batch if self._wants(e))
                if not self._buffer:  # only own or unwanted events: move the saved cursor on
                    await self._bus.save_cursor(self.tenant_id, self.agent_id, self._cursor)
                continue
            # On a timeout: the safety-net poll, for a notification lost with its connection.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._bell.wait(), self._poll_s)
        raise StopAsyncIteration

    async def __aenter__(self) -> Subscription:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close(ack=exc_type is None)

    # -- internals -------------------------------------------------------------------------

    def _ring(self, _channel: str, _payload: str) -> None:
        self._bell.set()

    def _wants(self, event: Event) -> bool:
        if event.agent_id == self.agent_id:
            return False  # an agent never hears its own events: it knows what it published
        return self._wanted is None or event.event_type in self._wanted

    async def _ack(self) -> None:
        if self._unacked is not None:
            await self._bus.save_cursor(self.tenant_id, self.agent_id, self._unacked)
            self._unacked = None

    async def _initial_cursor(self) -> int:
        if self._since is not None:
            return self._since
        saved = await self._bus.cursor(self.tenant_id, self.agent_id)
        if saved is not None:
            return saved
        newest = await self._bus.newest_id(self.tenant_id)
        await self._bus.save_cursor(self.tenant_id, self.agent_id, newest)
        return newest
