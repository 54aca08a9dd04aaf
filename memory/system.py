"""Where the memory layers are put together: the store, its recaller, and cache invalidation.

`memory.storage` is the bottom layer and knows nothing above it: a `MemoryStore` keeps rows,
vectors and the audit trail, and tells the caches registered on `store.cache` about its own
changes. `memory.recall` ranks: its `Recaller` (one per store, `recaller_for`) holds the per-user
recall index and registers itself on the store. The pieces that need layers from both sides are
wired here, once, so the lower layers need not import the upper ones:

- `recaller(store)`: the store's Recaller with each recall's latency recorded in the metrics
  histogram (storage and recall do not import observability; the callback is handed in here).
- `open_cache_sync(store)`: other processes' changes, heard on Postgres LISTEN, drop this
  process's stale recall entries and cached profiles (and any further invalidators given).

The agent (`agent/resources.py`, the CLI) opens a store with `open_store`, then calls these.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from memory.longterm.profile import invalidate_profile
from memory.observability.latency import RECALL_LATENCY
from memory.recall.recaller import Recaller, recaller_for
from memory.storage import cache_sync
from memory.storage.cache_sync import CacheSync, Invalidator
from memory.storage.listener import PgListener
from memory.storage.store import MemoryStore
from memory.types import Scope


def recaller(store: MemoryStore) -> Recaller:
    """The store's Recaller, recording each ranked recall's latency in `RECALL_LATENCY`."""
    return recaller_for(store, on_latency=RECALL_LATENCY.observe)


def profile_invalidator(scope: Scope | None) -> None:
    """Drop a user's cached profile (`memory.longterm.profile`).

    Its own version check covers `None` (notifications lost).
    """
    if scope is not None:
        invalidate_profile(scope)


@asynccontextmanager
async def open_cache_sync(
    store: MemoryStore,
    *invalidators: Invalidator,
    profiles: bool = True,
    listener: PgListener | None = None,
) -> AsyncIterator[CacheSync]:
    """A started CacheSync for `store`'s recall cache (and the profile cache), closed on exit."""
    extra = (profile_invalidator,) if profiles else ()
    async with cache_sync.open_cache_sync(
        store.pool,
        *extra,
        store.threads.on_lost,
        *invalidators,
        watchers=(recaller(store).on_change, store.threads.on_change),
        listener=listener,
    ) as sync:
        yield sync


__all__ = ["open_cache_sync", "profile_invalidator", "recaller"]
