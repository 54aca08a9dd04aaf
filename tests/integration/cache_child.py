"""Process B of the cache-invalidation test: its own MemoryStore, caches, and a CacheSync.

Reads one command per line on stdin, answers one JSON line on stdout:
  recall           -> {"ids": [...], "cached": bool}   (caches the user's memories)
  profile          -> {"fields": {...}, "cached": bool} (caches the user's profile)
  wait_dropped S   -> {"dropped_at": epoch s | None, ...} polls this process's caches only (no
                      database access) until both the recall and the profile entries are gone
  quit
Environment: DATABASE_URL, MEMORY_DATA_DIR, MEMORY_EMBEDDING_MODEL_DIR, CHILD_TENANT, CHILD_USER.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

from memory.longterm import profile
from memory.settings import Settings
from memory.storage.store import MemoryStore, open_store
from memory.system import open_cache_sync, recaller
from memory.types import Scope

_WATCH: list[asyncio.Task[dict[str, object]]] = []


def _cached(store: MemoryStore, scope: Scope) -> dict[str, bool]:
    return {
        "cached": recaller(store).cache.peek(scope) is not None,
        "profile_cached": scope.key in profile._CACHE,
    }


async def _wait_dropped(store: MemoryStore, scope: Scope, limit_s: float) -> dict[str, object]:
    # Polls only this process's memory: a drop can only come from a notification.
    started = time.perf_counter()
    while time.perf_counter() - started < limit_s:
        state = _cached(store, scope)
        if not state["cached"] and not state["profile_cached"]:
            return {"dropped_at": time.time(), **state}
        await asyncio.sleep(0.001)
    return {"dropped_at": None, **_cached(store, scope)}


async def _answer(store: MemoryStore, scope: Scope, line: str) -> dict[str, object]:
    command, *args = line.split()
    if command == "recall":
        hits = await recaller(store).recall(
            scope, "what does the user prefer?", k=10, record_access=False
        )
        await store.drain()  # a cold recall (L2) loads the cache in the background
        return {"ids": sorted(h.record.id for h in hits), **_cached(store, scope)}
    if command == "profile":
        loaded = await profile.load_profile(store, scope)
        return {"fields": {k: f.value for k, f in loaded.fields.items()}, **_cached(store, scope)}
    if command == "wait_dropped":
        return await _wait_dropped(store, scope, float(args[0]))
    if command == "watch":  # start polling now; `wait_dropped` then reports the first drop
        task = asyncio.get_running_loop().create_task(_wait_dropped(store, scope, 10.0))
        _WATCH.append(task)
        return {"watching": True}
    if command == "watched":
        return await _WATCH.pop()
    raise ValueError(f"unknown command {command!r}")


async def main() -> None:
    import os

    scope = Scope(os.environ["CHILD_TENANT"], os.environ["CHILD_USER"])
    async with open_store(Settings.from_env()) as store, open_cache_sync(store) as sync:
        print(json.dumps({"ready": True}), flush=True)
        loop = asyncio.get_running_loop()
        while True:
            line = (await loop.run_in_executor(None, sys.stdin.readline)).strip()
            if not line or line == "quit":
                break
            answer = await _answer(store, scope, line)
            answer["received"] = sync.received
            print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
