"""A model's cosine scale is measured once and read back from Postgres by later processes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from memory.storage import calibration
from memory.storage.calibrations import ensure_scale, load_scale
from memory.storage.store import MemoryStore, open_store
from tests.support.memory_stores import store_settings


class _Skewed:
    """A stand-in embedder: hashed directions bunched around one axis, like a model whose
    unrelated texts all sit at cosine ~0.7. Counts the texts it embeds."""

    dim = 32

    def __init__(self, name: str) -> None:
        self.name = name
        self.embedded = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.embedded += len(texts)
        rows = []
        for text in texts:
            rng = np.random.default_rng(sum(map(ord, text)) * 7919 + len(text))
            v = rng.normal(size=self.dim)
            v /= np.linalg.norm(v)
            v[0] += 1.6  # the shared direction
            rows.append(v / np.linalg.norm(v))
        return np.vstack(rows).astype(np.float32)

    async def aembed(self, texts: list[str]) -> np.ndarray:
        return self.embed(texts)


@pytest.fixture
async def store(
    pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path
) -> AsyncIterator[MemoryStore]:
    async with open_store(store_settings(pg_db_url, tmp_data_dir, embedding_model_dir)) as s:
        yield s


async def test_the_reference_model_needs_no_measuring(store: MemoryStore) -> None:
    assert store.scale.identity
    assert await load_scale(store.pool, store.embedder.name) is None


async def test_measured_once_then_read_back(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = _Skewed("test:skewed-embedder")
    monkeypatch.setattr(calibration, "_MEMO", {})
    first = await ensure_scale(store.pool, model)  # type: ignore[arg-type]
    assert model.embedded == len(calibration.reference_set().embedded())
    assert not first.identity
    stored = await load_scale(store.pool, model.name)
    assert stored is not None
    assert stored.model_quantiles == pytest.approx(first.model_quantiles)
    assert stored.separation == pytest.approx(first.separation)
    assert set(stored.background) == {"en", "zh"}
    for lang, (mean, std) in first.background.items():
        assert stored.background[lang] == pytest.approx((mean, std))
        assert stored.background_quantiles[lang] == pytest.approx(first.background_quantiles[lang])

    # A new process (an empty memo) reads the row instead of embedding the set again.
    monkeypatch.setattr(calibration, "_MEMO", {})
    again = await ensure_scale(store.pool, model)  # type: ignore[arg-type]
    assert model.embedded == len(calibration.reference_set().embedded())
    assert again.model_quantiles == pytest.approx(first.model_quantiles)
    xs = np.linspace(-1, 1, 201, dtype=np.float32)
    assert np.allclose(again.to_reference(xs), first.to_reference(xs), atol=1e-6)


async def test_a_degenerate_model_is_refused_and_not_stored(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Constant(_Skewed):
        def embed(self, texts: list[str]) -> np.ndarray:
            return np.tile(np.eye(1, self.dim, dtype=np.float32), (len(texts), 1))

    model = Constant("test:constant-embedder")
    monkeypatch.setattr(calibration, "_MEMO", {})
    with pytest.raises(calibration.DegenerateEmbeddingError, match="no calibration"):
        await ensure_scale(store.pool, model)  # type: ignore[arg-type]
    assert await load_scale(store.pool, model.name) is None
