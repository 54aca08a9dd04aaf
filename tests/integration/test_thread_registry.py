"""A user's threads are recorded once per process, and again after the user is forgotten.

Real Postgres, two stores (two processes' worth: each its own pool and change listener).
"""

from __future__ import annotations

import uuid
from pathlib import Path

from memory.settings import Settings
from memory.storage.forget import forget_user, user_thread_ids
from memory.storage.store import MemoryStore, open_store
from memory.system import open_cache_sync
from memory.types import Scope
from tests.support.ports import eventually


def _scope() -> Scope:
    return Scope("acme", f"thr-{uuid.uuid4().hex[:8]}")


async def test_a_thread_is_written_once_per_process(clean_store: MemoryStore) -> None:
    who = _scope()
    writes = clean_store.threads.writes
    for _ in range(5):
        await clean_store.touch_thread(who, "t1")
    await clean_store.touch_thread(who, "t2")
    assert clean_store.threads.writes - writes == 2  # one per thread, not one per turn
    assert await user_thread_ids(clean_store, who) == ["t1", "t2"]


async def test_after_a_forget_here_the_next_turn_records_the_thread_again(
    clean_store: MemoryStore,
) -> None:
    who = _scope()
    await clean_store.touch_thread(who, "t1")
    receipt = await forget_user(clean_store, who)
    assert receipt.threads == ["t1"]
    assert await user_thread_ids(clean_store, who) == []
    await clean_store.touch_thread(who, "t1")  # the user talks on in the same thread
    assert await user_thread_ids(clean_store, who) == ["t1"]
    assert (await forget_user(clean_store, who)).threads == ["t1"]


async def test_a_forget_in_another_process_reaches_this_ones_memory(
    clean_store: MemoryStore, pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path
) -> None:
    who = _scope()
    settings = Settings(
        database_url=pg_db_url, data_dir=tmp_data_dir, embedding_model_dir=embedding_model_dir
    )
    async with open_cache_sync(clean_store), open_store(settings) as other:
        await clean_store.touch_thread(who, "t1")
        writes = clean_store.threads.writes
        await clean_store.touch_thread(who, "t1")
        assert clean_store.threads.writes == writes  # remembered
        await forget_user(other, who)  # the other process deletes the user
        # The deletion notification arrives: the thread is recorded again on the next turn.
        await eventually(lambda: not clean_store.threads.remembers(who))
        await clean_store.touch_thread(who, "t1")
        assert clean_store.threads.writes == writes + 1
        assert await user_thread_ids(other, who) == ["t1"]
