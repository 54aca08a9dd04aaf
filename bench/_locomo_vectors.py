"""Embedding with a per-run cache (and an optional file cache for tuning runs).

The ~6,000 LoCoMo turns take minutes to embed on two CPU cores; within a run every distinct text
is embedded once. `--embed-cache PATH` keeps vectors between runs in an .npz file outside the
repository (e.g. under /tmp); it is keyed by model name and the sha256 of each text.
"""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import numpy as np

from memory.storage.embedding import Embedder, Vectors


def text_key(text: str) -> str:
    """The cache key of a text: its sha256 in hex.

    A fixed 64-character key per entry, whatever the text's length: a numpy string array takes
    the width of its longest text, so one 40,000-character turn made every entry of a long-chat
    cache that wide (gigabytes where the vectors are megabytes).
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class VectorCache:
    """Embeds texts through `embedder`, remembering every vector it has computed."""

    def __init__(self, embedder: Embedder, path: Path | None = None) -> None:
        self.embedder = embedder
        self.path = path
        self._known: dict[str, np.ndarray] = {}
        self._dirty = False
        if path is not None and path.is_file():
            self._known, self._dirty = load_cache(path, embedder.name)

    def embed(self, texts: list[str]) -> Vectors:
        """Vectors for `texts`, computing only the ones not seen before."""
        keys = [text_key(t) for t in texts]
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in self._known}
        if missing:
            vectors = self.embedder.embed(list(missing.values()))
            for key, vector in zip(missing, vectors, strict=True):
                self._known[key] = np.asarray(vector, dtype=np.float32)
            self._dirty = True
        if not texts:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        return np.vstack([self._known[k] for k in keys]).astype(np.float32)

    def save(self) -> None:
        """Write the file cache, if one was asked for and anything new was embedded."""
        if self.path is None or not self._dirty:
            return
        keys = list(self._known)
        np.savez(
            self.path,
            model=np.array(self.embedder.name),
            keys=np.array(keys, dtype="S64"),
            vectors=np.vstack([self._known[k] for k in keys]).astype(np.float32),
        )
        self._dirty = False


def load_cache(path: Path, model: str) -> tuple[dict[str, np.ndarray], bool]:
    """The cached vectors of `model` by key, and whether the file is in the old format.

    Old files keep the texts themselves (`texts`, as wide as the longest); they are read a
    block of rows at a time and rekeyed, and the flag tells the caller to write the file again
    in the compact format.
    """
    with np.load(path, allow_pickle=False) as data:
        if str(data["model"]) != model:
            return {}, False
        vectors = data["vectors"].astype(np.float32, copy=False)
        if "keys" in data.files:
            keys = [k.decode("ascii") for k in data["keys"].tolist()]
            return dict(zip(keys, vectors, strict=True)), False
    return dict(zip(_old_keys(path), vectors, strict=True)), True


def _old_keys(path: Path, rows: int = 1024) -> list[str]:
    # Reading the whole text array at once would hold every entry at the longest text's width.
    keys: list[str] = []
    with zipfile.ZipFile(path) as archive, archive.open("texts.npy") as member:
        version = np.lib.format.read_magic(member)
        header = (
            np.lib.format.read_array_header_1_0
            if version == (1, 0)
            else np.lib.format.read_array_header_2_0
        )
        shape, fortran, dtype = header(member)
        if fortran or len(shape) != 1:
            raise ValueError(f"{path}: unexpected text array layout")
        left = int(shape[0])
        while left:
            take = min(rows, left)
            block = np.frombuffer(member.read(take * dtype.itemsize), dtype=dtype, count=take)
            keys.extend(text_key(str(t)) for t in block)
            left -= take
    return keys
