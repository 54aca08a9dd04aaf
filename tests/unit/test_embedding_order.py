"""Length-sorted batching returns each text's own vector, in the caller's order."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memory.storage.embedding import OnnxEmbedder


def test_vectors_come_back_in_input_order(embedding_model_dir: Path) -> None:
    embedder = OnnxEmbedder(embedding_model_dir)
    texts = [("word " * n).strip() or "x" for n in (40, 1, 200, 3, 70, 2)] * 12  # > one batch
    texts = [f"{i}: {t}" for i, t in enumerate(texts)]
    together = embedder.embed(texts)
    for i in (0, 1, 2, 5, 37, 71):
        alone = embedder.embed([texts[i]])[0]
        assert np.allclose(together[i], alone, atol=1e-4), i
