"""A small thread-safe LRU cache with a TTL, for profiles and other per-user lookups.

`RecallCache` holds whole preloaded indexes and is bounded by memories held; this one holds
small values (a profile is one JSON row) bounded by entry count. Entries expire after `ttl_s`
even without an invalidation: NOTIFY (see `cache_sync`) makes invalidation prompt, the TTL
bounds how long a missed notification (a dropped LISTEN connection) can leave a stale value.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRUCache(Generic[K, V]):
    """Least-recently-used eviction beyond `max_entries`, expiry after `ttl_s` seconds."""

    def __init__(
        self,
        max_entries: int = 10_000,
        ttl_s: float = 300.0,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_entries < 1 or ttl_s <= 0:
            raise ValueError("max_entries must be >= 1 and ttl_s > 0")
        self._entries: OrderedDict[K, tuple[float, V]] = OrderedDict()
        self._lock = threading.Lock()
        self._max = max_entries
        self._ttl = ttl_s
        self._clock = clock
        self.hits = 0
        self.misses = 0
        self.evictions = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def get(self, key: K) -> V | None:
        """The cached value, or None when absent or expired (counted as a miss)."""
        with self._lock:
            item = self._entries.get(key)
            if item is not None and self._clock() - item[0] < self._ttl:
                self._entries.move_to_end(key)
                self.hits += 1
                return item[1]
            if item is not None:
                del self._entries[key]
            self.misses += 1
            return None

    def put(self, key: K, value: V) -> None:
        """Store a value, evicting the least recently used entries beyond the bound."""
        with self._lock:
            self._entries.pop(key, None)
            self._entries[key] = (self._clock(), value)
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)
                self.evictions += 1

    async def get_or_load(self, key: K, load: Callable[[], Awaitable[V]]) -> V:
        """The cached value, or `await load()` stored and returned."""
        value = self.get(key)
        if value is None:
            value = await load()
            self.put(key, value)
        return value

    def invalidate(self, key: K) -> bool:
        """Drop one entry; True when there was one."""
        with self._lock:
            return self._entries.pop(key, None) is not None

    def clear(self) -> None:
        """Drop everything."""
        with self._lock:
            self._entries.clear()

    @property
    def hit_rate(self) -> float:
        """Share of lookups answered from the cache."""
        total = self.hits + self.misses
        return self.hits / total if total else 0.0
