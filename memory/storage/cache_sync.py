"""Cross-process invalidation of the in-process caches (seeds 000 §6.1 and 003): LISTEN lma_cache.

Every change of a user's memories bumps `scope_versions`, every profile or consent change writes
`user_settings`, and triggers on both (migration 4) NOTIFY `lma_cache` with
"tenant/user/version" at commit. Each process's `CacheSync` drops its copies on hearing it.

Why both this and the version check in `StoreReads._entry`: the version check (one indexed
lookup per recall) is the correctness guarantee: a recall never serves a stale entry, even if a
notification was lost with a dropped connection. But it only runs when a recall does, and only
for the recall cache: a profile cached for minutes would be served stale until its TTL ran out,
unless each use polled the database, which is what caching it avoids. NOTIFY makes invalidation
prompt (a few milliseconds after the writer commits) for every cache that registers here, and
frees a changed user's preloaded memories without waiting for their next turn.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import NamedTuple

from memory.longterm.profile import invalidate_profile
from memory.sharing.bus_listener import PgListener
from memory.storage.store_read import StoreReads
from memory.types import Scope, ScopeError

log = logging.getLogger(__name__)

CACHE_CHANNEL = "lma_cache"
# A process's own write reaches its own listener too, possibly before the writer has moved its
# cache entry to the new version in place (`_cache_add` runs one pool-release round-trip, ~1 ms,
# after the commit). An entry exactly one version behind is re-checked after this grace instead
# of dropped at once, so a writer does not reload its user's memories after each of its writes.
# Another process's write is thus dropped ~50 ms after its commit; recalls never wait for it
# (their version check already refuses a stale entry).
OWN_WRITE_GRACE_S = 0.05

Invalidator = Callable[[Scope | None], None]  # None: everything (notifications were lost)


class Change(NamedTuple):
    """One notification: whose data changed, and what."""

    scope: Scope
    version: int | None  # the new memory version; None: settings, or the user was deleted
    settings_only: bool = False  # only user_settings (profile, consent): memories unchanged


def parse_payload(payload: str) -> Change | None:
    """Parse "tenant/user/<version>", "tenant/user/settings" or "tenant/user/-"."""
    parts = payload.split("/")
    if len(parts) != 3:
        return None
    try:
        scope = Scope(parts[0], parts[1])
    except ScopeError:
        return None
    if parts[2] in ("-", "settings"):
        return Change(scope, None, parts[2] == "settings")
    return Change(scope, int(parts[2])) if parts[2].isdigit() else None


class CacheSync:
    """Listens on `lma_cache` and invalidates the store's recall cache and registered caches."""

    def __init__(self, store: StoreReads, *, listener: PgListener | None = None) -> None:
        self._store = store
        self._own_listener = listener is None
        self.listener = listener or PgListener(store.pool)
        self._invalidators: list[Invalidator] = []
        self.received = 0
        self.invalidated = 0

    def add_invalidator(self, invalidate: Invalidator) -> None:
        """Also call `invalidate(scope)` on every change (`None` after lost notifications)."""
        self._invalidators.append(invalidate)

    async def start(self) -> None:
        """Start listening."""
        await self.listener.listen(CACHE_CHANNEL, self._on_notify)
        self.listener.on_reconnect(self._on_reconnect)

    async def close(self) -> None:
        """Stop listening."""
        self.listener.off_reconnect(self._on_reconnect)
        await self.listener.unlisten(CACHE_CHANNEL, self._on_notify)
        if self._own_listener:
            await self.listener.close()

    def handle(self, payload: str) -> None:
        """Apply one notification payload."""
        parsed = parse_payload(payload)
        if parsed is None:
            log.debug("ignoring malformed cache notification %r", payload)
            return
        self.received += 1
        scope, version, settings_only = parsed
        if not settings_only:  # the recall cache holds memories only
            self._drop_recall(scope, version)
        for invalidate in list(self._invalidators):
            invalidate(scope)

    def _drop_recall(self, scope: Scope, version: int | None) -> None:
        entry = self._store.cache.peek(scope)
        if entry is not None and version is not None and entry.version == version - 1:
            loop = asyncio.get_running_loop()
            loop.call_later(OWN_WRITE_GRACE_S, self._drop_if_behind, scope, version)
        else:
            self._drop_if_behind(scope, version)

    def _drop_if_behind(self, scope: Scope, version: int | None) -> None:
        entry = self._store.cache.peek(scope)
        if entry is not None and (version is None or entry.version < version):
            self._store.cache.invalidate(scope)
            self.invalidated += 1

    def _on_notify(self, _channel: str, payload: str) -> None:
        self.handle(payload)

    def _on_reconnect(self) -> None:
        # The recall cache is still guarded by its version check; the others are not.
        for invalidate in list(self._invalidators):
            invalidate(None)


def profile_invalidator(scope: Scope | None) -> None:
    """Drop a user's cached profile (`memory.longterm.profile`).

    Its own version check covers `None`.
    """
    if scope is not None:
        invalidate_profile(scope)


def key_invalidator(invalidate: Callable[[str], object], clear: Callable[[], None]) -> Invalidator:
    """An Invalidator for a cache keyed by `Scope.key`, e.g. an `LRUCache` without versions."""

    def run(scope: Scope | None) -> None:
        if scope is None:
            clear()
        else:
            invalidate(scope.key)

    return run


@asynccontextmanager
async def open_cache_sync(
    store: StoreReads,
    *invalidators: Invalidator,
    profiles: bool = True,
    listener: PgListener | None = None,
) -> AsyncIterator[CacheSync]:
    """A started CacheSync for `store` (and the profile cache), closed on exit."""
    sync = CacheSync(store, listener=listener)
    for invalidate in (*((profile_invalidator,) if profiles else ()), *invalidators):
        sync.add_invalidator(invalidate)
    await sync.start()
    try:
        yield sync
    finally:
        await sync.close()
