"""The embedder's memo of recent texts: the same vectors, computed once, never shared mutably."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np

from memory.storage.embedding import OnnxEmbedder, RecentVectors


def test_a_repeated_text_is_answered_from_the_memo_with_the_same_vector(
    embedding_model_dir: Path,
) -> None:
    embedder = OnnxEmbedder(embedding_model_dir)
    first = embedder.embed(["what is my locker number", "a second text"])
    assert (embedder.memo.misses, embedder.memo.hits) == (2, 0)
    again = asyncio.run(embedder.aembed(["what is my locker number"]))
    assert (embedder.memo.misses, embedder.memo.hits) == (2, 1)
    assert np.array_equal(again[0], first[0])
    # A mixed batch computes only the new text, and keeps the caller's order.
    mixed = embedder.embed(["new words here", "a second text"])
    assert (embedder.memo.misses, embedder.memo.hits) == (3, 2)
    assert np.array_equal(mixed[1], first[1])
    fresh = OnnxEmbedder(embedding_model_dir).embed(["new words here"])[0]
    assert np.allclose(mixed[0], fresh, atol=1e-5)


def test_a_caller_changing_its_vector_changes_no_one_elses(embedding_model_dir: Path) -> None:
    embedder = OnnxEmbedder(embedding_model_dir)
    original = embedder.embed(["my cat is called Tom"])[0].copy()
    got = embedder.embed(["my cat is called Tom"])
    got[0][:] = 0.0
    assert np.array_equal(embedder.embed(["my cat is called Tom"])[0], original)


def test_the_memo_is_bounded_and_skips_long_texts() -> None:
    memo = RecentVectors(entries=2)
    vectors = np.eye(4, dtype=np.float32)
    memo.put_all(["a", "b", "c"], vectors[:3])
    assert memo.get_all(["a", "b", "c"], count=False)[0] is None  # the oldest went
    memo.put_all(["x" * 5_000], vectors[3:])
    assert memo.get_all(["x" * 5_000], count=False) == [None]
    assert memo.all_held(["b", "c"]) is not None and memo.all_held(["b", "zz"]) is None
    memo.clear()
    assert memo.get_all(["b", "c"], count=False) == [None, None]


def test_a_text_asked_for_twice_at_once_is_computed_once(embedding_model_dir: Path) -> None:
    embedder = OnnxEmbedder(embedding_model_dir)

    async def both() -> tuple[np.ndarray, np.ndarray]:
        one, two = await asyncio.gather(
            embedder.aembed(["where did I park the car"]),
            embedder.aembed(["where did I park the car"]),
        )
        return one, two

    one, two = asyncio.run(both())
    assert embedder.memo.misses == 1  # one computation for both callers
    assert np.array_equal(one, two)
    one[0][:] = 0.0  # each caller has its own copy
    assert not np.array_equal(one, two)


def test_a_query_and_its_clauses_asked_for_twice_at_once_are_computed_once(
    embedding_model_dir: Path,
) -> None:
    """Perceive starts a two-question message's embeddings; recall joins them, not redoes them."""
    embedder = OnnxEmbedder(embedding_model_dir)
    texts = [
        "where is the car? and when is the dentist?",
        "where is the car?",
        "when is the dentist?",
    ]

    async def both() -> tuple[np.ndarray, np.ndarray]:
        one, two = await asyncio.gather(embedder.aembed(texts), embedder.aembed(texts))
        return one, two

    one, two = asyncio.run(both())
    assert embedder.memo.misses == 3  # one computation of the three texts for both callers
    assert one.shape == (3, embedder.dim) and np.array_equal(one, two)


def test_a_cancelled_caller_does_not_cancel_the_other(embedding_model_dir: Path) -> None:
    embedder = OnnxEmbedder(embedding_model_dir)

    async def run() -> np.ndarray:
        first = asyncio.ensure_future(embedder.aembed(["the quarterly report is late"]))
        second = asyncio.ensure_future(embedder.aembed(["the quarterly report is late"]))
        await asyncio.sleep(0)
        first.cancel()
        return await second

    got = asyncio.run(run())
    assert got.shape == (1, embedder.dim) and abs(float(np.linalg.norm(got[0])) - 1.0) < 1e-4
