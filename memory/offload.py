"""CPU work on user text, kept off the event loop and, for large inputs, off its interpreter.

A worker thread frees the event loop but not Python's interpreter lock: a thread that spends
seconds in the gate's pure-Python passes over a 64,000-character paste makes every other
request wait its turn for the lock (measured: `/ok` p99 117-213 ms while such a turn ran, with
the work already in threads). Ordinary turns are small and cost milliseconds, so they stay on a
thread; text of `LARGE_TEXT_CHARS` or more goes to a separate process, whose lock is its own.
`run_in_process` sends work there whatever its size, for work that must not run in this process
at all (`memory.storage.vector_log`: a second copy of SQLite beside the embedded Chroma's).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

LARGE_TEXT_CHARS = 8_000
"""From this size on, text work runs in the process pool (the gate takes ~0.1 s here on this
project's 2-core machines, and grows linearly: a 64,000-character paste costs 0.2-3 s)."""

_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None


def _quiet_child() -> None:
    # The pool's processes share the server's process group: Ctrl-C there is the server's to
    # handle, and a child that also raised KeyboardInterrupt would print a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _get_pool() -> ProcessPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            # spawn, not fork: forking a process that runs an event loop and worker threads can
            # copy a held lock into the child. Started lazily: most processes never need it.
            _pool = ProcessPoolExecutor(
                max_workers=max(1, min(2, (os.cpu_count() or 1) - 1)),
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_quiet_child,
            )
        return _pool


def _drop_pool() -> None:
    global _pool
    with _lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)


async def _in_pool(call: Callable[[], T]) -> T:
    # Creating the pool and submitting (which may start a process) block: from a thread, never
    # on the event loop (the LangGraph dev server raises BlockingError there).
    future = await asyncio.to_thread(lambda: _get_pool().submit(call))
    return await asyncio.wrap_future(future)


async def run_cpu(fn: Callable[..., T], /, *args: Any, size: int, **kwargs: Any) -> T:
    """`fn(*args, **kwargs)` off the event loop: a thread, or a process when `size` is large.

    `fn` and its arguments must be picklable (module-level functions and plain data) when
    `size >= LARGE_TEXT_CHARS`. A pool that broke (a child killed) is replaced, and that call
    runs in a thread instead, so a crash there never loses the turn.
    """
    call = functools.partial(fn, *args, **kwargs)
    if size < LARGE_TEXT_CHARS:
        return await asyncio.to_thread(call)
    try:
        return await _in_pool(call)
    except BrokenProcessPool:
        log.warning("text worker process died; running this call in a thread")
        _drop_pool()
        return await asyncio.to_thread(call)


async def run_in_process(fn: Callable[..., T], /, *args: Any) -> T:
    """`fn(*args)` in the pool's separate process, never in this one.

    For work that is unsafe in this process, not merely slow in it, so there is no fallback to
    a thread: a pool that broke is replaced and the call runs once more in the new one, and a
    second failure is raised. `fn` and its arguments must be picklable.
    """
    call = functools.partial(fn, *args)
    try:
        return await _in_pool(call)
    except BrokenProcessPool:
        log.warning("worker process died; running this call in a new one")
        _drop_pool()
    return await _in_pool(call)


def shutdown() -> None:
    """Stop the pool's processes (tests; process exit does it too)."""
    _drop_pool()


__all__ = ["LARGE_TEXT_CHARS", "run_cpu", "run_in_process", "shutdown"]
