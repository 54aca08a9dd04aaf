"""Cross-process invalidation of the in-process caches: LISTEN lma_cache.

Every change of a user's memories bumps `scope_versions`, every profile or consent change writes
`user_settings`, and triggers on both (migration 4) NOTIFY `lma_cache` with
"tenant/user/version" at commit. Each process's `CacheSync` drops its copies on hearing it.

Why both this and the version check of each recall (`Recaller.entry`): the version check (one
indexed lookup per recall) is the correctness guarantee: a recall never serves a stale entry,
even if a notification was lost with a dropped connection. But it only runs when a recall does,
and only for the recall cache: a profile cached for minutes would be served stale until its TTL
ran out, unless each use polled the database, which is what caching it avoids. NOTIFY makes
invalidation prompt (a few milliseconds after the writer commits) for every cache that registers
here, and frees a changed user's preloaded memories without waiting for their next turn.

Which caches listen is decided where the application is composed (`memory.system`): this module
knows notifications, not the caches above storage.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import NamedTuple

from memory.storage.db import Database
from memory.storage.listener import PgListener
from memory.types import Scope, ScopeError

log = logging.getLogger(__name__)

CACHE_CHANNEL = "lma_cache"
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
    """Listens on `lma_cache` and tells the registered caches what changed."""

    def __init__(self, pool: Database, *, listener: PgListener | None = None) -> None:
        self._own_listener = listener is None
        self.listener = listener or PgListener(pool)
        self._invalidators: list[Invalidator] = []
        self._watchers: list[Callable[[Change], None]] = []
        self.received = 0

    def add_invalidator(self, invalidate: Invalidator) -> None:
        """Call `invalidate(scope)` on every change, and `invalidate(None)` after lost ones.

        For caches that cannot tell stale from fresh themselves (the profile cache).
        """
        self._invalidators.append(invalidate)

    def add_watcher(self, watch: Callable[[Change], None]) -> None:
        """Call `watch(change)` on every change (not after lost notifications).

        For caches that check a version on every use (the recall cache): they only need the
        prompt notice, and can use the version to keep an entry this process already updated.
        """
        self._watchers.append(watch)

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
        change = parse_payload(payload)
        if change is None:
            log.debug("ignoring malformed cache notification %r", payload)
            return
        self.received += 1
        for watch in list(self._watchers):
            watch(change)
        for invalidate in list(self._invalidators):
            invalidate(change.scope)

    def _on_notify(self, _channel: str, payload: str) -> None:
        self.handle(payload)

    def _on_reconnect(self) -> None:
        # Watchers check a version on every use; the invalidators' caches do not.
        for invalidate in list(self._invalidators):
            invalidate(None)


@asynccontextmanager
async def open_cache_sync(
    pool: Database,
    *invalidators: Invalidator,
    watchers: tuple[Callable[[Change], None], ...] = (),
    listener: PgListener | None = None,
) -> AsyncIterator[CacheSync]:
    """A started CacheSync calling `invalidators` and `watchers`, closed on exit."""
    sync = CacheSync(pool, listener=listener)
    for invalidate in invalidators:
        sync.add_invalidator(invalidate)
    for watch in watchers:
        sync.add_watcher(watch)
    await sync.start()
    try:
        yield sync
    finally:
        await sync.close()


__all__ = [
    "CACHE_CHANNEL",
    "CacheSync",
    "Change",
    "Invalidator",
    "open_cache_sync",
    "parse_payload",
]
