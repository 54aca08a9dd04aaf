"""Batch updates of one user's rows, run at once, never deadlock and lose no count.

The Chroma indexer marks rows indexed, recall stores ranking features, access statistics add
counts: each is one multi-row UPDATE, and in a busy process they touch the same rows at the
same time. Each took its row locks in its own order (its plan's, its input's) and Postgres
killed one of two statements that waited on each other; shuffled inputs make that likely.
Real Postgres and embedded Chroma.
"""

from __future__ import annotations

import asyncio
import json
import random

import numpy as np

from memory.storage.access_log import AccessLog
from memory.storage.store import MemoryStore
from memory.types import NewMemory, Scope

ALICE = Scope("acme", "alice")
ROWS = 120


async def test_concurrent_batch_updates_of_the_same_rows_all_succeed(
    clean_store: MemoryStore,
) -> None:
    store = clean_store
    written = await store.write_many(
        ALICE, [NewMemory(f"Note {i} on topic {i % 7}") for i in range(ROWS)]
    )
    records = [r for r in [await store.get(ALICE, w.id) for w in written] if r is not None]
    assert len(records) == ROWS
    vectors = np.random.default_rng(0).standard_normal((ROWS, 384)).astype(np.float32)
    rng = random.Random(3)
    logs = [AccessLog(store.pool, linger_s=0.0) for _ in range(2)]
    failures: list[BaseException] = []

    def shuffled() -> list[int]:
        order = list(range(ROWS))
        rng.shuffle(order)
        return order

    async def index(times: int) -> None:
        for _ in range(times):
            order = shuffled()
            try:
                assert await store.index_batch([records[i] for i in order], vectors[order])
            except Exception as exc:  # every failure is the finding
                failures.append(exc)

    async def features(tag: int, times: int) -> None:
        for _ in range(times):
            pairs = [(records[i].id, json.dumps({"w": tag})) for i in shuffled()]
            try:
                await store.save_recall_features(ALICE, pairs)
            except Exception as exc:
                failures.append(exc)

    async def access(log: AccessLog, times: int) -> None:
        for _ in range(times):
            log.add(ALICE, [records[i].id for i in shuffled()], query_chars=10)
            await log.flush()

    await asyncio.gather(
        index(8), index(8), features(1, 15), features(2, 15), access(logs[0], 10),
        access(logs[1], 10),
    )  # fmt: skip
    for log in logs:
        await log.close()
    assert failures == []
    assert sum(log.dropped for log in logs) == 0
    async with store.pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT access_count, indexed_at, recall_features FROM memories"
            " WHERE tenant_id = $1 AND user_id = $2",
            ALICE.tenant_id,
            ALICE.user_id,
        )
    assert len(rows) == ROWS
    assert all(r["indexed_at"] is not None for r in rows)
    assert all(json.loads(r["recall_features"])["w"] in (1, 2) for r in rows)
    # Every access was written exactly once (a retried batch would count twice).
    assert {r["access_count"] for r in rows} == {20}
