"""Property: with many tenants and users writing and reading at once, no read crosses a user.

Hypothesis draws a workload (who writes what, who reads with which query, through which of two
stores standing in for two server processes with their own caches) and runs all of it
concurrently on real Postgres + embedded Chroma + MiniLM. The same user id exists in several
tenants, and queries deliberately quote other users' secrets. Every record any read returns must
belong to the reader.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.settings import Settings
from memory.storage.store import MemoryStore, open_store
from memory.system import recaller
from memory.types import MemoryKind, MemoryRecord, NewMemory, Scope

TENANTS = 3
USERS = 3  # per tenant, with the same ids in every tenant: "u0" of t0 is not "u0" of t1
WORDS = ["budget", "locker", "editor", "train", "allergy", "password hint", "dentist", "deadline"]


@dataclass
class Stores:
    loop: asyncio.AbstractEventLoop
    pair: list[MemoryStore]


@pytest.fixture(scope="module")
def stores(
    pg_db_url: str, tmp_path_factory: pytest.TempPathFactory, embedding_model_dir: Path
) -> Iterator[Stores]:
    # Hypothesis calls the test many times; one loop and two long-lived stores serve them all.
    loop = asyncio.new_event_loop()
    stack = AsyncExitStack()
    data_dir = tmp_path_factory.mktemp("isolation-data")
    cfg = Settings(
        database_url=pg_db_url, data_dir=data_dir, embedding_model_dir=embedding_model_dir
    )
    pair = [loop.run_until_complete(stack.enter_async_context(open_store(cfg))) for _ in range(2)]
    yield Stores(loop, pair)
    loop.run_until_complete(stack.aclose())
    loop.close()


scopes = st.builds(lambda t, u: (t, u), st.integers(0, TENANTS - 1), st.integers(0, USERS - 1))
write_op = st.tuples(st.just("write"), scopes, st.sampled_from(WORDS), st.integers(0, 1))
read_op = st.tuples(
    st.sampled_from(["recall", "list", "similar", "long_term", "get_foreign"]),
    scopes,
    st.sampled_from(WORDS),
    st.integers(0, 1),
)
workloads = st.lists(st.one_of(write_op, read_op), min_size=6, max_size=30)


class Run:
    """One example's bookkeeping: its own scope names, so examples never share a user."""

    def __init__(self, stores: Stores) -> None:
        self.stores = stores
        self.tag = uuid.uuid4().hex[:6]
        self.owner: dict[str, Scope] = {}
        self.texts: dict[str, str] = {}
        self.reads: list[tuple[Scope, list[MemoryRecord]]] = []

    def scope(self, pick: tuple[int, int]) -> Scope:
        return Scope(f"t{pick[0]}-{self.tag}", f"u{pick[1]}")

    def secret(self, scope: Scope, word: str) -> str:
        return f"{scope.tenant_id} {scope.user_id} {word} is S{uuid.uuid4().hex[:10]}"

    async def op(self, kind: str, pick: tuple[int, int], word: str, which: int) -> None:
        store, scope = self.stores.pair[which], self.scope(pick)
        if kind == "write":
            mem = NewMemory(self.secret(scope, word), kind=MemoryKind.SEMANTIC)
            record = await store.write(scope, mem)
            self.owner[record.id] = scope
            self.texts[record.id] = mem.content
            return
        found: list[MemoryRecord] = []
        if kind == "recall":
            # The query quotes someone else's secret word for word: the strongest possible lure.
            lure = next((t for m, t in self.texts.items() if self.owner[m] != scope), word)
            found = [h.record for h in await recaller(store).recall(scope, lure, k=10)]
        elif kind == "list":
            found = await store.list_memories(scope, limit=500)
        elif kind == "similar":
            found = [r for r, _ in await recaller(store).similar(scope, f"{word} is", k=10)]
        elif kind == "long_term":
            found = await recaller(store).long_term(scope, limit=50)
        else:  # someone else's ids, asked for by id
            for mid in list(self.owner):
                got = await store.get(scope, mid)
                found += [got] if got is not None else []
        self.reads.append((scope, found))


def _check(run: Run) -> None:
    for reader, records in run.reads:
        for record in records:
            assert record.scope == reader, f"{reader.key} read {record.scope.key}'s memory"
            owner = run.owner.get(record.id)
            assert owner is None or owner == reader, f"{reader.key} read {owner}'s memory"


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(workload=workloads)
def test_no_read_ever_returns_another_users_memory(stores: Stores, workload: list[Any]) -> None:
    run = Run(stores)

    async def main() -> None:
        # Seed each example with one memory per user so every reader has neighbours to leak.
        seeds = [run.op("write", (t, u), "seed", (t + u) % 2) for t in range(TENANTS)
                 for u in range(USERS)]  # fmt: skip
        await asyncio.gather(*seeds)
        await asyncio.gather(*(run.op(*op) for op in workload))
        # A final read of everyone after the dust settles, through both stores.
        finals = [run.op("list", (t, u), "", w) for t in range(TENANTS) for u in range(USERS)
                  for w in (0, 1)]  # fmt: skip
        await asyncio.gather(*finals)

    stores.loop.run_until_complete(main())
    _check(run)
    # Every user sees exactly their own memories at the end, in both processes.
    for reader, records in run.reads[-2 * TENANTS * USERS :]:
        mine = {mid for mid, scope in run.owner.items() if scope == reader}
        assert {r.id for r in records} == mine
