"""Short ids (a unique prefix, dashes optional) name a user's memory; never another user's."""

from __future__ import annotations

import pytest

from memory.storage.store import AmbiguousIdError, MemoryStore
from memory.types import NewMemory, Scope

ALICE, BOB = Scope("acme", "alice"), Scope("acme", "bob")


async def _add(store: MemoryStore, scope: Scope, text: str) -> str:
    [record] = await store.write_many(scope, [NewMemory(content=text)])
    return record.id


async def test_a_unique_prefix_names_the_memory_and_nothing_else_does(
    clean_store: MemoryStore,
) -> None:
    store = clean_store
    mine = await _add(store, ALICE, "I keep my passport in the blue folder.")
    theirs = await _add(store, BOB, "My bike lock code is written on the shed door.")
    bare = mine.replace("-", "")
    assert await store.resolve_id(ALICE, mine) == mine
    assert await store.resolve_id(ALICE, bare[:8]) == mine
    assert await store.resolve_id(ALICE, bare[:8].upper()) == mine
    assert await store.resolve_id(ALICE, mine[:13]) == mine  # with its dash
    # Too short, not hex, a LIKE wildcard, or another user's: returned as given (not found).
    for given in (bare[:3], "zzzzzzzz", "%", "____", theirs[:8], theirs):
        assert await store.resolve_id(ALICE, given) == given
        assert await store.get(ALICE, given) is None


async def test_an_ambiguous_prefix_is_refused_naming_the_candidates(
    clean_store: MemoryStore,
) -> None:
    store = clean_store
    made = [await _add(store, ALICE, f"Fact number {i} about my garden.") for i in range(2)]
    # Random ids rarely share four digits: give two of them a common start, as a user with
    # many thousands of memories will have.
    wanted = ["deadbeef-0000-4000-8000-000000000001", "deadbeef-0000-4000-8000-000000000002"]
    async with store.pool.acquire() as conn:
        for old, new in zip(made, wanted, strict=True):
            await conn.execute("UPDATE memories SET id = $2 WHERE id = $1", old, new)
    with pytest.raises(AmbiguousIdError, match="more than one memory id") as err:
        await store.resolve_id(ALICE, "deadbeef")
    assert all(w in str(err.value) for w in wanted)
    assert await store.resolve_id(ALICE, "deadbeef00004000800000000000000" + "2") == wanted[1]
    assert await store.resolve_id(BOB, "deadbeef") == "deadbeef"  # not Bob's: not found
