"""The background batch loop shared by the Chroma indexer and the access statistics."""

from __future__ import annotations

import asyncio

from memory.storage.batch_queue import BatchQueue


async def test_items_arriving_together_share_one_batch() -> None:
    batches: list[list[int]] = []

    async def process(batch: list[int]) -> None:
        batches.append(batch)

    queue: BatchQueue[int] = BatchQueue(process, linger_s=0.05)
    for i in range(5):
        queue.put([i])
    assert queue.pending == 5
    await queue.flush()
    assert batches == [[0, 1, 2, 3, 4]] and queue.pending == 0
    await queue.close()


async def test_a_failed_batch_is_retried_in_order_when_retry_is_set() -> None:
    seen: list[list[int]] = []
    failures = [1]

    async def process(batch: list[int]) -> None:
        seen.append(batch)
        if failures:
            failures.pop()
            raise ConnectionError("postgres away")

    queue: BatchQueue[int] = BatchQueue(process, linger_s=0.0, retry_s=0.01)
    queue.put([1, 2])
    await queue.flush()  # returns after the failed attempt, the batch kept
    queue.put([3])
    for _ in range(100):
        if queue.pending == 0:
            break
        await asyncio.sleep(0.01)
    assert seen[0] == [1, 2] and seen[-1][:2] == [1, 2] and any(3 in batch for batch in seen[1:])
    assert queue.pending == 0
    await queue.close()


async def test_without_retry_a_failed_batch_is_dropped_and_the_worker_lives_on() -> None:
    done: list[int] = []

    async def process(batch: list[int]) -> None:
        if 0 in batch:
            raise ValueError("bad item")
        done.extend(batch)

    queue: BatchQueue[int] = BatchQueue(process, linger_s=0.0)
    queue.put([0])
    await queue.flush()
    queue.put([7])
    await queue.flush()
    assert done == [7]
    await queue.close()


async def test_the_drain_hook_runs_when_woken_with_nothing_queued_and_survives_errors() -> None:
    calls: list[str] = []

    async def process(batch: list[int]) -> None:
        calls.append("batch")

    async def drained() -> None:
        calls.append("drained")
        if len(calls) == 1:
            raise RuntimeError("hook failed")

    queue: BatchQueue[int] = BatchQueue(process, linger_s=0.0, on_drained=drained)
    queue.wake()
    await queue.flush(force=True)
    queue.put([1])
    await queue.flush()
    assert calls == ["drained", "batch", "drained"]
    await queue.close()


async def test_drop_oldest_keeps_the_newest() -> None:
    done: list[int] = []

    async def process(batch: list[int]) -> None:
        done.extend(batch)

    queue: BatchQueue[int] = BatchQueue(process, linger_s=10.0)  # lingers: nothing taken yet
    queue.put(list(range(10)))
    await asyncio.sleep(0)
    assert queue.drop_oldest(3) == 7 and queue.pending == 3
    assert queue.drop_oldest(5) == 0
    await queue.flush()  # hurries the lingering worker
    assert done == [7, 8, 9]
    await queue.close()
