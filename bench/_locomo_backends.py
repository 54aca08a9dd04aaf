"""Retrieval backends the LoCoMo benchmark compares: the system and two baselines.

A backend ingests a user's memories and answers recall queries with the provenance of what it
found. `SystemBackend` is the project's own ranking (`UserIndex` + the embedder, in process);
a storage-backed backend (`MemoryStore.write_many` / `recall`) plugs in through the same
protocol. The baselines are plain BM25 and dense-only cosine over "speaker: content".
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

import numpy as np

from bench._locomo_vectors import VectorCache
from memory.recall.clauses import split_clauses
from memory.recall.lexical import LexicalIndex, tokenize
from memory.recall.ranking import RankingWeights
from memory.recall.representation import (
    dense_vectors,
    embed_text,
    index_text,
    indexed_memory,
    own_text,
)
from memory.recall.retrieval import Clause, UserIndex
from memory.storage.calibration import CosineScale
from memory.types import NewMemory, Relevance, Scope


@dataclass(slots=True)
class Hit:
    """One recalled memory: the source turns it covers (its recall slots) and its score.

    `passed` says whether it clears the system's absolute relevance floor (baselines have no
    floor: their hits always pass); `relevance` keeps the raw cosine and word share.
    """

    dia_ids: list[str]
    score: float
    passed: bool = True
    relevance: Relevance | None = None


class Backend(Protocol):
    """What the benchmark needs from a memory system."""

    name: str

    async def ingest(self, scope: Scope, memories: Sequence[NewMemory]) -> None:
        """Store a user's memories."""
        ...

    async def recall(self, scope: Scope, query: str, k: int, *, now: datetime) -> list[Hit]:
        """The k best memories for `query`, best first."""
        ...


def _dia_ids(memory: NewMemory) -> list[str]:
    ids = memory.provenance.get("dia_ids") or []
    return [str(i) for i in ids] if isinstance(ids, list) else []


def _speaker(memory: NewMemory) -> str | None:
    value = memory.provenance.get("speaker")
    return str(value) if value else None


@dataclass
class SystemBackend:
    """The project's ranking in process: `UserIndex` over `representation` texts + embedder."""

    vectors: VectorCache
    weights: RankingWeights = field(default_factory=RankingWeights)
    # The embedder's cosine scale (`storage.calibration`); None ranks on raw cosines.
    scale: CosineScale | None = None
    name: str = "system"
    search_ms: list[float] = field(default_factory=list)
    _indexes: dict[Scope, UserIndex] = field(default_factory=dict)
    _turns: dict[tuple[Scope, str], list[str]] = field(default_factory=dict)

    async def ingest(self, scope: Scope, memories: Sequence[NewMemory]) -> None:
        """Embed and index the memories (the store would also persist them).

        Each memory with context also gets its own text's vector and is ranked by the mean of
        the two (`dense_vectors`), as the store does (`MemoryStore.embed_memories`).
        """
        texts = [
            embed_text(m.content, speaker=_speaker(m), occurred_at=m.occurred_at, context=m.context)
            for m in memories
        ]
        owns = [
            (i, t)
            for i, m in enumerate(memories)
            if (t := own_text(m.content, speaker=_speaker(m), context=m.context)) is not None
        ]
        both = self.vectors.embed(texts + [t for _, t in owns])
        vectors = both[: len(texts)]
        own = vectors.copy()
        if owns:
            own[[i for i, _ in owns]] = both[len(texts) :]
        matrix = dense_vectors(vectors, own)
        index = self._indexes.setdefault(scope, UserIndex(scale=self.scale))
        items = []
        for i, (memory, vector) in enumerate(zip(memories, matrix, strict=True)):
            memory_id = f"{scope.user_id}-{i}"
            self._turns[(scope, memory_id)] = _dia_ids(memory)
            items.append(indexed_memory(memory_id, memory, vector))
        index.upsert(items)

    def index(self, scope: Scope) -> UserIndex:
        """The user's index (for benchmarks that look past the ranked hits)."""
        return self._indexes[scope]

    def turns(self, scope: Scope, memory_id: str) -> list[str]:
        """The source turns a memory covers."""
        return self._turns[(scope, memory_id)]

    async def recall(self, scope: Scope, query: str, k: int, *, now: datetime) -> list[Hit]:
        """Embed the query and search the user's index."""
        parts = split_clauses(query)
        vectors = self.vectors.embed([query, *parts])
        clauses = [Clause(t, v) for t, v in zip(parts, vectors[1:], strict=True)]
        started = time.perf_counter()
        found = self._indexes[scope].search(
            query, vectors[0], k=k, now=now, weights=self.weights, clauses=clauses
        )
        self.search_ms.append((time.perf_counter() - started) * 1000.0)
        return [
            Hit(
                self._turns[(scope, mid)],
                b.total,
                passed=b.relevance is None or b.relevance.passed,
                relevance=b.relevance,
            )
            for mid, b in found
        ]


@dataclass
class BM25Backend:
    """Baseline: Okapi BM25 (k1 1.2, b 0.75) over "speaker: content", stopwords removed."""

    name: str = "bm25"
    _index: dict[Scope, tuple[LexicalIndex, list[list[str]]]] = field(default_factory=dict)

    async def ingest(self, scope: Scope, memories: Sequence[NewMemory]) -> None:
        """Index each memory's text; a user ingested again is replaced, as in the other backends.

        (Appending instead counted every turn twice when the `--data` file was also one of the
        `--dev-sets`, and BM25's figures for that set differed between the two tables.)
        """
        index, turns = self._index[scope] = (LexicalIndex(k1=1.2, b=0.75), [])
        for memory in memories:
            text = index_text(memory.content, speaker=_speaker(memory))
            index.add(len(turns), tokenize(text))
            turns.append(_dia_ids(memory))

    async def recall(self, scope: Scope, query: str, k: int, *, now: datetime) -> list[Hit]:
        """Top-k by BM25."""
        index, turns = self._index[scope]
        scores = index.scores(tokenize(query), len(turns))
        order = np.argsort(-scores, kind="stable")[:k]
        return [Hit(turns[i], float(scores[i])) for i in order]


@dataclass
class DenseBackend:
    """Baseline: cosine of the embedder's vectors of "speaker: content" (no context)."""

    vectors: VectorCache
    name: str = "dense"
    _index: dict[Scope, tuple[np.ndarray, list[list[str]]]] = field(default_factory=dict)

    async def ingest(self, scope: Scope, memories: Sequence[NewMemory]) -> None:
        """Embed each memory's labelled text."""
        texts = [index_text(m.content, speaker=_speaker(m)) for m in memories]
        self._index[scope] = (self.vectors.embed(texts), [_dia_ids(m) for m in memories])

    async def recall(self, scope: Scope, query: str, k: int, *, now: datetime) -> list[Hit]:
        """Top-k by cosine."""
        matrix, turns = self._index[scope]
        sims = matrix @ self.vectors.embed([query])[0]
        order = np.argsort(-sims, kind="stable")[:k]
        return [Hit(turns[i], float(sims[i])) for i in order]
