"""The benchmark's embed cache: compact keys, float32 vectors, old files still readable."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bench._locomo_vectors import VectorCache, text_key


class _Embedder:
    name = "fake"
    dim = 3

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += len(texts)
        return np.array([[len(t), 1.0, 0.5] for t in texts], dtype=np.float64)


def test_keys_stay_small_whatever_the_text_length(tmp_path: Path) -> None:
    path = tmp_path / "cache.npz"
    cache = VectorCache(_Embedder(), path)  # type: ignore[arg-type]
    cache.embed(["short", "x" * 50_000])
    cache.save()
    with np.load(path) as data:
        assert data["keys"].dtype == np.dtype("S64")
        assert data["vectors"].dtype == np.float32
        assert "texts" not in data.files
    assert path.stat().st_size < 5_000
    again = _Embedder()
    reloaded = VectorCache(again, path)  # type: ignore[arg-type]
    assert reloaded.embed(["x" * 50_000])[0, 0] == 50_000
    assert again.calls == 0


def test_an_old_cache_with_texts_is_read_and_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "old.npz"
    texts = ["alpha", "beta gamma"]
    vectors = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=np.float32)
    np.savez(path, model=np.array("fake"), texts=np.array(texts), vectors=vectors)
    embedder = _Embedder()
    cache = VectorCache(embedder, path)  # type: ignore[arg-type]
    assert cache.embed(["beta gamma"]).tolist() == [[4.0, 5.0, 6.0]]
    assert embedder.calls == 0
    cache.save()
    with np.load(path) as data:
        assert [k.decode() for k in data["keys"]] == [text_key(t) for t in texts]
