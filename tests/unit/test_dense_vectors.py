"""The similarity rule for a memory with two vectors: the mean of the query's two cosines."""

from __future__ import annotations

import numpy as np

from memory.recall.representation import dense_vectors
from memory.storage.embedding import embed_text, own_text


def _unit(rng: np.random.Generator, n: int, dim: int = 16) -> np.ndarray:
    v = rng.normal(size=(n, dim)).astype(np.float32)
    out: np.ndarray = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


def test_product_with_the_dense_vector_is_the_mean_of_both_cosines() -> None:
    rng = np.random.default_rng(7)
    context, own, queries = _unit(rng, 5), _unit(rng, 5), _unit(rng, 3)
    dense = dense_vectors(context, own)
    assert dense.dtype == np.float32 and dense.shape == context.shape
    expected = ((queries @ context.T) + (queries @ own.T)) / 2
    np.testing.assert_allclose(queries @ dense.T, expected, atol=1e-6)


def test_a_memory_without_context_keeps_its_vector_exactly() -> None:
    rng = np.random.default_rng(8)
    vectors = _unit(rng, 4)
    own = vectors.copy()
    own[1] = _unit(rng, 1)[0]  # only the second memory has a vector of its own
    dense = dense_vectors(vectors, own)
    for i in (0, 2, 3):
        assert np.array_equal(dense[i], vectors[i])
    assert not np.allclose(dense[1], vectors[1])
    assert np.array_equal(dense_vectors(vectors, None), vectors)


def test_only_a_memory_embedded_with_context_has_an_own_text() -> None:
    context = "assistant: we talked about brake pads for a while"
    assert own_text("Gina is my sister-in-law", speaker="user") is None
    assert own_text("Gina is my sister-in-law", speaker="user", context="  \n ") is None
    own = own_text("Gina is my sister-in-law", speaker="user", context=context)
    assert own == "user: Gina is my sister-in-law"
    assert embed_text("Gina is my sister-in-law", speaker="user", context=context) != own
