"""Where the memory layers are put together: the store, its recaller, and cache invalidation.

`memory.storage` is the bottom layer and knows nothing above it: a `MemoryStore` keeps rows,
vectors and the audit trail, and tells the caches registered on `store.cache` about its own
changes. `memory.recall` ranks: its `Recaller` (one per store, `recaller_for`) holds the per-user
recall index and registers itself on the store. The pieces that need layers from both sides are
wired here, once, so the lower layers need not import the upper ones:

- `recaller(store)`: the store's Recaller with each recall's latency recorded in the metrics
  histogram (storage and recall do not import observability; the callback is handed in here).
- `settle_process()`: once a process's store is open, its long-lived objects are kept out of
  the garbage collector's full collections (`freeze_long_lived`: they made every large recall
  pay for them), the collector waits for more new objects before it runs (`GC_YOUNG_THRESHOLD`),
  and its threads take turns with the event loop sooner (`GIL_SWITCH_S`).
- `open_cache_sync(store)`: other processes' changes, heard on Postgres LISTEN, drop this
  process's stale recall entries and cached profiles (and any further invalidators given).

The agent (`agent/resources.py`, the CLI) opens a store with `open_store`, then calls these.
"""

from __future__ import annotations

import gc
import sys
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


def freeze_long_lived() -> None:
    """Keep every object alive now out of the garbage collector's full collections.

    Call once in a long-running process, after its store is open: the modules, the embedding
    model and the clients then live as long as the process, and a full collection walks every
    tracked object. Recall allocates ~30 objects per candidate (a large user's L2 recall indexes
    ~400); with ~110,000 such objects alive, the collections this triggered took decoding 400
    candidate rows from 2.5 ms to 9 ms. Garbage is collected first, so none is frozen with them.
    Only the first call acts (a process that opens stores on several event loops, or a test
    session that opens one per test, would otherwise freeze what those later leave behind).
    """
    global _frozen
    if _frozen:
        return
    _frozen = True
    gc.collect()
    gc.freeze()


_frozen = False

# How long a thread may hold the interpreter while another waits for it (CPython's default is
# 5 ms). Recall runs the Chroma client and the query's tokenising in threads while the event
# loop indexes candidates in pure Python: each time such a thread needed the interpreter back
# (to read Chroma's answer, to hand on the embedding) it could wait up to 5 ms on a busy loop,
# on the critical path. At 1 ms, `bench.big_user --corpus random` measured a 200,000-memory
# user's recall p95 ~3 ms lower (8 of 10 paired rounds better); handing over more often costs
# nothing measurable here, where the other threads mostly wait on I/O or native code.
GIL_SWITCH_S = 0.001


# How many more container objects than were freed a process may allocate before the youngest
# generation is collected (CPython's default is 700). A large user's L2 recall builds an index of
# ~200 candidate rows: thousands of short-lived objects that reference counting frees when the
# recall ends. At 700 they set off ~4 young collections per recall (213, 19 of the middle
# generation and 1 full in 58 recalls of the 200,000-memory user, `bench.big_user --corpus
# random`), 0.5-0.7 ms of collecting per recall that freed nothing that mattered. At 5,000 a
# recall still set some off; at 20,000 none did (174 recalls). Cyclic garbage waits a little
# longer: at most this many objects, a few MB.
GC_YOUNG_THRESHOLD = 20_000


def settle_process() -> None:
    """What a long-running process does once its store is open.

    `freeze_long_lived`; the youngest generation is collected after `GC_YOUNG_THRESHOLD` new
    objects (never lowered: a process that chose more keeps it); threads waiting for the
    interpreter get it within `GIL_SWITCH_S`.
    """
    freeze_long_lived()
    young, *older = gc.get_threshold()
    gc.set_threshold(max(young, GC_YOUNG_THRESHOLD), *older)
    sys.setswitchinterval(GIL_SWITCH_S)


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


__all__ = [
    "freeze_long_lived",
    "open_cache_sync",
    "profile_invalidator",
    "recaller",
    "settle_process",
]
