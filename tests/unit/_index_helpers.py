"""Small builders for UserIndex tests: hand-made vectors, fixed clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from memory.recall.retrieval import IndexedMemory, UserIndex
from memory.storage.embedding import Embedder
from memory.types import MemoryKind

NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
DIM = 16


def unit(seed: int) -> np.ndarray:
    """A deterministic random unit vector."""
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def memory(
    mid: str,
    text: str,
    *,
    vector: np.ndarray | None = None,
    days_ago: float = 10.0,
    importance: float = 0.5,
    access_count: int = 0,
    kind: MemoryKind = MemoryKind.EPISODIC,
    expires_at: datetime | None = None,
    **extra: object,
) -> IndexedMemory:
    """An IndexedMemory with sensible defaults."""
    return IndexedMemory(
        id=mid,
        text=text,
        vector=unit(0) if vector is None else vector,
        kind=kind,
        occurred_at=NOW - timedelta(days=days_ago),
        importance=importance,
        access_count=access_count,
        expires_at=expires_at,
        **extra,  # type: ignore[arg-type]
    )


def filler(count: int, start: int = 100) -> list[IndexedMemory]:
    """Unrelated memories with random vectors."""
    words = ["garden", "coffee", "meeting", "report", "weather", "train", "music", "lunch"]
    return [
        memory(f"f{i}", f"{words[i % 8]} {words[(i * 3) % 8]} notes", vector=unit(start + i))
        for i in range(count)
    ]


def embedded_index(embedder: Embedder, texts: list[str]) -> UserIndex:
    """An index of `texts` as memories m0, m1, ... with their real embeddings."""
    vectors = embedder.embed(texts)
    index = UserIndex()
    index.upsert(
        [memory(f"m{i}", t, vector=v) for i, (t, v) in enumerate(zip(texts, vectors, strict=True))]
    )
    return index
