"""Two agents write the same slot of one user at once, on two connections: nothing is lost.

Each writer's read of the user's similar memories is slowed by 0.3 s, so without the per-user
lock both would decide against the same (empty) state; the control test shows exactly that.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest

from memory.gating.ingest import apply as ingest_apply
from memory.gating.ingest.apply import ConflictStrategy, write_with_policy
from memory.storage.store import MemoryStore
from memory.system import recaller
from memory.types import Category, MemoryKind, MemoryRecord, NewMemory, Origin, Scope, Status
from tests.support.memory_stores import open_stores, truncate

ALICE = Scope("acme", "alice")
RACE_WINDOW_S = 0.3


@pytest.fixture
async def agents(
    pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[list[MemoryStore]]:
    async with AsyncExitStack() as stack:
        stores = await open_stores(stack, 2, pg_db_url, tmp_data_dir, embedding_model_dir)
        await truncate(*stores)
        for store in stores:
            _widen_race_window(store, monkeypatch)
        yield stores


def _widen_race_window(store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    read = recaller(store).similar

    async def slow_similar(*args: Any, **kwargs: Any) -> Any:
        found = await read(*args, **kwargs)
        await asyncio.sleep(RACE_WINDOW_S)  # decide on what was read, long after reading it
        return found

    monkeypatch.setattr(recaller(store), "similar", slow_similar)


def _pref(text: str) -> NewMemory:
    return NewMemory(
        text,
        kind=MemoryKind.PREFERENCE,
        category=Category.PREFERENCE,
        origin=Origin.EXPLICIT,
        ttl_days=None,
        provenance={"agent_id": "test"},
    )


async def _all(store: MemoryStore) -> list[MemoryRecord]:
    statuses = [s.value for s in Status]
    return await store.list_memories(ALICE, statuses=statuses, limit=50)


async def _events(store: MemoryStore, name: str) -> list[dict[str, Any]]:
    return [e for e in await store.events(ALICE) if e["event"] == name]


async def _race(stores: list[MemoryStore], texts: list[str], strategy: ConflictStrategy) -> None:
    await asyncio.gather(
        *(
            write_with_policy(store, ALICE, _pref(text), strategy=strategy, reason="agent write")
            for store, text in zip(stores, texts, strict=True)
        )
    )


@pytest.mark.parametrize("strategy", ["policy", "last_write_wins"])
async def test_last_write_wins_keeps_the_loser_linked(
    agents: list[MemoryStore], strategy: ConflictStrategy
) -> None:
    await _race(agents, ["I prefer tea.", "I prefer coffee."], strategy)
    rows = await _all(agents[0])
    assert sorted(r.content for r in rows) == ["I prefer coffee.", "I prefer tea."]  # both kept
    active = [r for r in rows if r.status is Status.ACTIVE]
    superseded = [r for r in rows if r.status is Status.SUPERSEDED]
    assert len(active) == 1 and len(superseded) == 1
    assert superseded[0].superseded_by == active[0].id
    # The winner is the write that came second in the serial order.
    assert superseded[0].created_at < active[0].created_at
    conflicts = await _events(agents[1], "conflict")
    assert len(conflicts) == 1 and conflicts[0]["memory_id"] == active[0].id
    recalled = await recaller(agents[1]).recall(ALICE, "what does alice prefer to drink?", k=5)
    assert [h.record.id for h in recalled] == [active[0].id]


async def test_merge_keeps_both_statements(agents: list[MemoryStore]) -> None:
    await _race(agents, ["I prefer tea.", "I prefer coffee."], "merge")
    rows = await _all(agents[0])
    active = [r for r in rows if r.status is Status.ACTIVE]
    assert len(active) == 1
    assert "tea" in active[0].content and "coffee" in active[0].content
    assert len(await _events(agents[0], "conflict")) == 1


async def test_mark_conflict_keeps_both_active_and_flags(agents: list[MemoryStore]) -> None:
    await _race(agents, ["I prefer tea.", "I prefer coffee."], "mark_conflict")
    rows = await _all(agents[0])
    assert sorted(r.content for r in rows if r.status is Status.ACTIVE) == [
        "I prefer coffee.",
        "I prefer tea.",
    ]
    flagged = [r for r in rows if "conflict" in r.tags]
    assert len(flagged) == 1  # the second write, tagged; the first is its conflict target
    conflict_ids = {e["memory_id"] for e in await _events(agents[0], "conflict")}
    assert conflict_ids == {r.id for r in rows}


async def test_concurrent_list_additions_lose_no_item(agents: list[MemoryStore]) -> None:
    await write_with_policy(agents[0], ALICE, _pref("My favourite languages are Python and Go."))
    additions = ["I also like Rust.", "I also like Haskell."]
    await _race(agents, additions, "policy")
    active = [r for r in await _all(agents[0]) if r.status is Status.ACTIVE]
    assert len(active) == 1, [r.content for r in active]
    for language in ("Python", "Go", "Rust", "Haskell"):
        assert language in active[0].content


async def test_without_the_lock_the_race_goes_unseen(
    agents: list[MemoryStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Control: the same race through the unlocked body of the write path.
    unlocked: Callable[..., Awaitable[Any]] = ingest_apply._apply
    monkeypatch.setattr(ingest_apply, "apply_resolution", unlocked)
    await _race(agents, ["I prefer tea.", "I prefer coffee."], "policy")
    rows = await _all(agents[0])
    assert len([r for r in rows if r.status is Status.ACTIVE]) == 2  # the contradiction stands
    assert await _events(agents[0], "conflict") == []  # and nobody noticed


async def test_other_users_do_not_wait(agents: list[MemoryStore]) -> None:
    users = [Scope("acme", f"user{i}") for i in range(4)]
    started = asyncio.get_running_loop().time()
    await asyncio.gather(
        *(
            write_with_policy(agents[i % 2], scope, _pref("I prefer tea."))
            for i, scope in enumerate(users)
        )
    )
    elapsed = asyncio.get_running_loop().time() - started
    # Serialised, four writes would take 4 x 0.3 s; per-user locks let them overlap.
    assert elapsed < 3 * RACE_WINDOW_S, elapsed
