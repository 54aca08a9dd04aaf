"""Embedding with a per-run cache (and an optional file cache for tuning runs).

The ~6,000 LoCoMo turns take minutes to embed on two CPU cores; within a run every distinct text
is embedded once. `--embed-cache PATH` keeps vectors between runs in an .npz file outside the
repository (e.g. under /tmp); it is keyed by model name and text.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memory.storage.embedding import Embedder, Vectors


class VectorCache:
    """Embeds texts through `embedder`, remembering every vector it has computed."""

    def __init__(self, embedder: Embedder, path: Path | None = None) -> None:
        self.embedder = embedder
        self.path = path
        self._known: dict[str, np.ndarray] = {}
        self._dirty = False
        if path is not None and path.is_file():
            data = np.load(path, allow_pickle=False)
            if str(data["model"]) == embedder.name:
                self._known = dict(zip(data["texts"].tolist(), data["vectors"], strict=True))

    def embed(self, texts: list[str]) -> Vectors:
        """Vectors for `texts`, computing only the ones not seen before."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._known]
        if missing:
            for text, vector in zip(missing, self.embedder.embed(missing), strict=True):
                self._known[text] = vector
            self._dirty = True
        if not texts:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        return np.vstack([self._known[t] for t in texts]).astype(np.float32)

    def save(self) -> None:
        """Write the file cache, if one was asked for and anything new was embedded."""
        if self.path is None or not self._dirty:
            return
        texts = list(self._known)
        np.savez(
            self.path,
            model=np.array(self.embedder.name),
            texts=np.array(texts),
            vectors=np.vstack([self._known[t] for t in texts]),
        )
        self._dirty = False
