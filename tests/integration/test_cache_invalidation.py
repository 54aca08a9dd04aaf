"""Cross-process cache invalidation: process B caches, process A writes, B drops its copies.

B is a separate OS process with its own MemoryStore (tests/integration/cache_child.py). It only
polls its in-process caches while waiting, so the drop can only come from the NOTIFY on
`lma_cache`, not from B's own version check.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from memory.longterm import profile
from memory.settings import Settings
from memory.storage.store import MemoryStore, open_store
from memory.system import open_cache_sync, recaller
from memory.types import Category, MemoryKind, NewMemory, Scope
from tests.support.memory_stores import store_settings, truncate
from tests.support.ports import REPO_ROOT, child_env, eventually

ALICE = Scope("acme", "alice")


@pytest.fixture
async def store(
    pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path
) -> AsyncIterator[MemoryStore]:
    async with open_store(store_settings(pg_db_url, tmp_data_dir, embedding_model_dir)) as s:
        await truncate(s)
        profile._CACHE.clear()
        yield s


class Child:
    """Process B, driven over stdin/stdout."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    async def ask(self, command: str, timeout: float = 30.0) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(command.encode() + b"\n")
        await self.proc.stdin.drain()
        line = await asyncio.wait_for(self.proc.stdout.readline(), timeout)
        assert line, "process B exited"
        answer: dict[str, Any] = json.loads(line)
        return answer


@pytest.fixture
async def child(pg_db_url: str, tmp_path: Path, embedding_model_dir: Path) -> AsyncIterator[Child]:
    data_dir = tmp_path / "child-data"  # its own embedded Chroma: only Postgres is shared
    env = child_env(
        {
            "DATABASE_URL": pg_db_url,
            "MEMORY_DATA_DIR": str(data_dir),
            "MEMORY_EMBEDDING_MODEL_DIR": str(embedding_model_dir),
            "CHILD_TENANT": ALICE.tenant_id,
            "CHILD_USER": ALICE.user_id,
            "PYTHONPATH": str(REPO_ROOT),
        }
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(Path(__file__).with_name("cache_child.py")),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env, cwd=REPO_ROOT,
    )  # fmt: skip
    assert proc.stdout is not None
    ready = await asyncio.wait_for(proc.stdout.readline(), 120)
    assert json.loads(ready) == {"ready": True}
    yield Child(proc)
    if proc.returncode is None:
        assert proc.stdin is not None
        proc.stdin.write(b"quit\n")
        try:
            await asyncio.wait_for(proc.wait(), 20)
        except TimeoutError:
            proc.kill()
            await proc.wait()


def _pref(text: str) -> NewMemory:
    return NewMemory(text, kind=MemoryKind.PREFERENCE, category=Category.PREFERENCE, ttl_days=None)


async def test_a_write_in_process_a_drops_process_b_caches(
    store: MemoryStore, child: Child
) -> None:
    first = await store.write(ALICE, _pref("I prefer answers in French."))
    seen = await child.ask("recall")
    assert seen["ids"] == [first.id] and seen["cached"]
    assert (await child.ask("profile"))["profile_cached"]
    assert (await child.ask("watch"))["watching"]
    started = time.time()
    second = await store.write(ALICE, _pref("I prefer code examples in Rust."))
    returned = time.time()
    dropped = await child.ask("watched")
    assert dropped["dropped_at"] is not None, dropped  # B never touched the database meanwhile
    assert dropped["dropped_at"] - started < 1.0, dropped
    assert dropped["received"] >= 1
    again = await child.ask("recall")
    assert again["ids"] == sorted([first.id, second.id])
    print(
        f"\nB dropped its caches {1000 * (dropped['dropped_at'] - started):.1f} ms after A began"
        f" the write (A's write call took {1000 * (returned - started):.1f} ms)"
    )


async def test_a_profile_change_alone_reaches_process_b(store: MemoryStore, child: Child) -> None:
    await store.write(ALICE, _pref("I prefer answers in French."))
    await child.ask("recall")
    assert (await child.ask("profile"))["profile_cached"]
    await store.set_consent(ALICE, True)  # touches user_settings only, not scope_versions
    dropped = await child.ask("wait_dropped 0.5")
    assert dropped["profile_cached"] is False  # the profile cache heard it
    assert dropped["cached"] is True  # the recall cache did not need to: nothing changed there


async def test_own_writes_keep_the_cache_warm(store: MemoryStore) -> None:
    async with open_cache_sync(store) as sync:
        await store.write(ALICE, _pref("I prefer tea."))
        await recaller(store).recall(ALICE, "drinks", k=3)
        await store.drain()  # the cold recall was served by L2 and loaded the cache meanwhile
        entry = recaller(store).cache.peek(ALICE)
        assert entry is not None
        await store.write(ALICE, _pref("I prefer window seats."))
        await asyncio.sleep(0.5)  # longer than the own-write grace
        assert sync.received >= 2
        assert recaller(store).cache.peek(ALICE) is entry and entry.size() == 2  # updated in place
        misses = recaller(store).cache.misses
        await recaller(store).recall(ALICE, "seats", k=3)
        assert recaller(store).cache.misses == misses  # no reload


async def test_invalidation_resumes_after_a_dropped_connection(
    store: MemoryStore, pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path
) -> None:
    profiles: dict[str, dict[str, str]] = {}

    def drop(scope: Scope | None) -> None:  # a cache without versions: everything on None
        if scope is None:
            profiles.clear()
        else:
            profiles.pop(scope.key, None)

    settings: Settings = store_settings(pg_db_url, tmp_data_dir, embedding_model_dir)
    async with (
        open_store(settings) as writer,
        open_cache_sync(store, drop) as sync,
    ):
        profiles[ALICE.key] = {"language": "fr"}
        pid = sync.listener.backend_pid
        async with writer.pool.acquire() as conn:
            await conn.fetchval("SELECT pg_terminate_backend($1)", pid)
        await eventually(lambda: sync.listener.reconnects == 1)
        assert len(profiles) == 0  # notifications may have been missed: everything dropped
        profiles[ALICE.key] = {"language": "fr"}
        await writer.write(ALICE, _pref("I prefer answers in German."))
        await eventually(lambda: len(profiles) == 0)  # the new connection heard the write
        assert sync.received >= 1
