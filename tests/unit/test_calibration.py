"""The per-model cosine scale: monotone, identity for the reference model, clear on degenerate."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from memory.storage.calibration import (
    CosineScale,
    DegenerateEmbeddingError,
    identity_scale,
    measure,
    reference_set,
    scale_for,
)


class _Vectors:
    """An embedder from a function of the text (no model)."""

    def __init__(self, name: str, fn: object) -> None:
        self.name = name
        self._fn = fn

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.vstack([self._fn(t) for t in texts]).astype(np.float32)  # type: ignore[operator]


def _hashed(text: str) -> np.ndarray:
    rng = np.random.default_rng(abs(hash(text)) % 2**32)
    v = rng.normal(size=16)
    return v / np.linalg.norm(v)


def test_reference_set_is_bilingual_and_balanced() -> None:
    ref = reference_set()
    langs = {lang for *_, lang in ref.pairs}
    assert {"en", "zh"} <= langs
    assert len(ref.pairs) >= 200
    related = sum(r for _, _, r, _ in ref.pairs)
    assert 0.3 < related / len(ref.pairs) < 0.7
    assert list(ref.quantiles) == sorted(ref.quantiles)


def test_map_is_strictly_increasing_everywhere() -> None:
    ref = reference_set()
    shifted = tuple(0.7 + 0.3 * (q + 0.02) for q in ref.quantiles)  # a model bunched high
    scale = CosineScale("shifted", ref.version, shifted, ref.quantiles)
    xs = np.linspace(-1.0, 1.0, 2001, dtype=np.float32)
    ys = scale.to_reference(xs)
    assert np.all(np.diff(ys) > 0)
    assert scale.one(1.0) == pytest.approx(1.0, abs=1e-6)
    # Its quantiles land on the reference's.
    assert scale.to_reference(shifted) == pytest.approx(np.array(ref.quantiles), abs=1e-5)


def test_identity_scale_changes_nothing() -> None:
    scale = identity_scale("local:all-MiniLM-L6-v2")
    xs = np.linspace(-1.0, 1.0, 101, dtype=np.float32)
    assert scale.identity
    assert np.array_equal(scale.to_reference(xs), xs)


def test_constant_vectors_are_a_clear_error() -> None:
    constant = _Vectors("constant", lambda _t: np.ones(8) / np.sqrt(8))
    with pytest.raises(DegenerateEmbeddingError, match="constant"):
        measure(constant)


def test_a_measured_model_is_held_once() -> None:
    calls: list[int] = []

    def fn(text: str) -> np.ndarray:
        calls.append(1)
        return _hashed(text)

    model = _Vectors("hashed-test-model", fn)
    first = scale_for(model)
    count = len(calls)
    assert scale_for(model) is first
    assert len(calls) == count


@pytest.mark.skipif(
    not os.environ.get("MEMORY_EMBEDDING_MODEL_DIR"), reason="local MiniLM model not configured"
)
def test_local_minilm_reproduces_the_reference_quantiles() -> None:
    from memory.storage.embedding import get_embedder

    model_dir = Path(os.environ["MEMORY_EMBEDDING_MODEL_DIR"])
    embedder = get_embedder(f"local:{model_dir.name}", model_dir)
    scale = measure(embedder)
    assert np.allclose(scale.model_quantiles, reference_set().quantiles, atol=1e-3)
    assert scale.identity
    xs = np.linspace(-1.0, 1.0, 101, dtype=np.float32)
    assert np.allclose(
        CosineScale(
            "m",
            scale.version,
            scale.model_quantiles,
            scale.reference_quantiles,
        ).to_reference(xs),
        xs,
        atol=1e-3,
    )
