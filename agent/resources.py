"""Process-wide clients for the graph nodes: one MemoryStore per event loop.

The LangGraph server imports the graph once and runs nodes on its event loop; an asyncpg pool
belongs to the loop that created it, so the store is opened lazily on first use in that loop
and closed when the process exits. Tests and the CLI pass their own store instead
(`configurable["memory_store"]`), which wins.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import weakref
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any, ParamSpec, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_store as get_runtime_store

from memory.governed_store import GovernedStore
from memory.settings import apply_privacy_defaults
from memory.storage.availability import is_unavailable, unavailable_from
from memory.storage.store import MemoryStore, open_store
from memory.system import open_cache_sync, recaller, settle_process

P = ParamSpec("P")
R = TypeVar("R")

_STORES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[MemoryStore, AsyncExitStack]]
_STORES = weakref.WeakKeyDictionary()
_LOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
    weakref.WeakKeyDictionary()
)


async def get_store(config: RunnableConfig | None = None) -> MemoryStore:
    """The store injected through the run config, else this loop's shared store."""
    injected: Any = ((config or {}).get("configurable") or {}).get("memory_store")
    if isinstance(injected, MemoryStore):
        return injected
    governed = _runtime_store()
    if governed is not None:
        return governed.memory
    loop = asyncio.get_running_loop()
    lock = _LOCKS.setdefault(loop, asyncio.Lock())
    async with lock:
        if loop not in _STORES:
            apply_privacy_defaults()
            stack = AsyncExitStack()
            store = await stack.enter_async_context(open_store())
            recaller(store)  # this store's recall cache, with latency recorded in the metrics
            # Prompt invalidation of this process's caches when another process writes.
            await stack.enter_async_context(open_cache_sync(store))
            settle_process()  # once per process: see its docstring
            _STORES[loop] = (store, stack)
        return _STORES[loop][0]


def _runtime_store() -> GovernedStore | None:
    # Under the server the run's store is the governed store over this loop's MemoryStore:
    # reuse it, so the nodes and `runtime.store` share one pool and one recall cache.
    try:
        store = get_runtime_store()
    except (RuntimeError, KeyError):  # not inside a run, or a runnable that is not a graph
        return None
    if isinstance(store, GovernedStore) and store.on_current_loop():
        return store
    return None


async def close_stores() -> None:
    """Close this loop's shared store (tests, CLI shutdown)."""
    loop = asyncio.get_running_loop()
    pair = _STORES.pop(loop, None)
    if pair is not None:
        with contextlib.suppress(Exception):
            await pair[1].aclose()


async def close_all_stores(timeout_s: float = 10.0) -> None:
    """Close every loop's shared store: the server's shutdown, before its loops stop.

    Left open, a store is finalised by the interpreter's async-generator cleanup at exit, which
    closes the nested pool generators concurrently and prints tracebacks on Ctrl-C.
    """
    current = asyncio.get_running_loop()
    for loop in list(_STORES.keys()):
        if loop is current:
            await close_stores()
        elif loop.is_running() and not loop.is_closed():
            future = asyncio.run_coroutine_threadsafe(close_stores(), loop)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.wrap_future(future), timeout_s)


def store_errors_are_clear(node: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Wrap a graph node so a database outage fails the run with `MemoryStoreUnavailable`.

    The server shows a client only the type of an unknown exception ("ConnectionRefusedError:
    An internal error occurred"); this error's message says what happened and to retry. The
    node's update is discarded with the exception, so the turn writes nothing partial, and the
    next turn gates the message this one could not (the gate's watermark did not move).
    """

    @functools.wraps(node)
    async def guarded(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await node(*args, **kwargs)
        except Exception as exc:
            if is_unavailable(exc):
                raise unavailable_from(exc) from exc
            raise

    return guarded
