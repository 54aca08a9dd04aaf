"""The benchmark's BM25 baseline: a user ingested again is replaced, not counted twice."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from bench._locomo_backends import BM25Backend
from memory.types import NewMemory, Scope

NOW = datetime(2025, 1, 1, tzinfo=UTC)


def _memories() -> list[NewMemory]:
    texts = ["my sister Ines marries in Lisbon", "the hotel is by the river", "tea, no coffee"]
    return [NewMemory(t, provenance={"dia_ids": [f"D1:{i}"]}) for i, t in enumerate(texts, 1)]


def test_ingesting_a_user_again_replaces_their_memories() -> None:
    async def run() -> tuple[list[float], list[float], int]:
        scope, backend = Scope("t", "u"), BM25Backend()
        await backend.ingest(scope, _memories())
        once = [h.score for h in await backend.recall(scope, "Lisbon river", 10, now=NOW)]
        await backend.ingest(scope, _memories())
        hits = await backend.recall(scope, "Lisbon river", 10, now=NOW)
        return once, [h.score for h in hits], len(hits)

    once, twice, count = asyncio.run(run())
    assert count == 3  # not six
    assert twice == once
