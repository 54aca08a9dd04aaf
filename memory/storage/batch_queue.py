"""A queue drained in batches by one worker task, off the path of whoever adds to it.

Background writers (Chroma upserts of stored rows, access statistics) share one shape: callers
add items and return at once; a worker task waits `linger_s` after the first item so that items
arriving together share one call, then takes everything queued as one batch (what arrives while
a batch runs goes in the next). `flush()` waits until what was queued has been handled, which is
what closing a store needs. What a batch does, what happens when it fails and how a backlog is
bounded are the owner's decisions; this module only runs the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")


class BatchQueue(Generic[T]):
    """Items handled in batches by `process`, one worker task per event loop.

    If `process` raises and `retry_s` is set, the batch goes back to the front of the queue and
    is tried again `retry_s` later (a flush meanwhile waits for the failed attempt only, not for
    the cause to go away); without `retry_s` the error is logged and the batch dropped, so an
    owner that must not lose items handles its own failures. `on_drained` runs each time the
    queue empties, before flushes waiting on it return.
    """

    def __init__(
        self,
        process: Callable[[list[T]], Awaitable[None]],
        *,
        linger_s: float,
        retry_s: float | None = None,
        on_drained: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """Handle batches with `process`, `linger_s` after the first item of each."""
        self._process = process
        self.linger_s = max(0.0, linger_s)
        self._retry_s = retry_s
        self._on_drained = on_drained
        self._items: list[T] = []
        self._busy = 0  # items taken by the running batch
        self._wake: asyncio.Event | None = None
        self._hurry: asyncio.Event | None = None
        self._idle: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def pending(self) -> int:
        """Items added and not yet handled (queued or in the running batch)."""
        return len(self._items) + self._busy

    def put(self, items: Sequence[T]) -> None:
        """Queue `items` and make sure the worker will handle them; returns at once."""
        self._items.extend(items)
        self.wake()

    def drop_oldest(self, keep: int) -> int:
        """Drop queued items beyond the newest `keep`; how many were dropped."""
        extra = max(0, len(self._items) - max(0, keep))
        del self._items[:extra]
        return extra

    def wake(self) -> None:
        """Run the worker (started if need be) even with nothing queued: `on_drained` runs."""
        if self._wake is None or self._hurry is None or self._idle is None:
            self._wake, self._hurry, self._idle = asyncio.Event(), asyncio.Event(), asyncio.Event()
        self._idle.clear()
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())
        self._wake.set()

    async def flush(self, *, force: bool = False) -> None:
        """Wait until what is queued has been handled (with `force`, even if nothing is)."""
        if self._task is None or self._task.done() or self._idle is None or self._hurry is None:
            return
        if self.pending or force:
            self._hurry.set()
            await asyncio.shield(self._idle.wait())

    async def close(self) -> None:
        """Stop the worker (after `flush()`, if what is queued should be handled first)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        assert self._wake is not None and self._hurry is not None and self._idle is not None
        while True:
            await self._wake.wait()
            if self.linger_s and not self._hurry.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._hurry.wait(), self.linger_s)
            self._wake.clear()
            self._hurry.clear()
            batch, self._items = self._items, []
            self._busy = len(batch)
            try:
                if batch:
                    await self._process(batch)
            except Exception as exc:
                if self._retry_s is None:
                    log.warning("a background batch of %d failed, dropped: %s", len(batch), exc)
                else:
                    log.warning("a background batch of %d failed; retrying: %s", len(batch), exc)
                    self._items[:0] = batch
                    self._busy = 0
                    self._idle.set()  # a flush waits for this attempt only, not for the cause
                    await asyncio.sleep(self._retry_s)
                    self._wake.set()
                    continue
            finally:
                self._busy = 0
            if not self._items:
                if self._on_drained is not None:
                    try:
                        await self._on_drained()
                    except Exception as exc:  # the worker must outlive its owner's hook
                        log.warning("a background queue's drain hook failed: %s", exc)
                self._idle.set()


__all__ = ["BatchQueue"]
