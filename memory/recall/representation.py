"""How a memory is represented for search: its index text, its embedding text, its index entry.

Recall calls these when it preloads a user's index, the store computes each memory's vector from
`embed_text` and `own_text` (kept beside the embedder in storage, re-exported here) and ranks
by `dense_vectors` of the two, and the LoCoMo benchmark
calls the same functions, so what the benchmark measures is what the agent searches.

Measured on LoCoMo (categories 1-4, recall@10): "speaker: text" beats the bare text for BM25
(58.6 against 55.4) and for MiniLM (44.9 against 30.0); embedding the memory together with its
context (the neighbouring turns) is worth about +10 points when fused with BM25.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from memory.recall.asked_of import role_of
from memory.recall.retrieval import IndexedMemory
from memory.storage.embedding import embed_text, labelled, own_text
from memory.types import MemoryRecord, NewMemory


def index_text(
    content: str,
    *,
    speaker: str | None = None,
    occurred_at: datetime | None = None,
    context: str = "",
) -> str:
    """The text BM25 matches against: "speaker: content".

    The context is not part of it: it is indexed separately (`IndexedMemory.context`) so a
    word in a neighbouring turn counts for less than one in the memory itself. The date is left
    out too: dates are matched by the temporal term, which understands "last week"; as text they
    would make every memory look dated to the "when ..." signal.
    """
    del occurred_at, context  # part of the signature so every caller passes the same fields
    return labelled(content, speaker)


# The own-text cosine's share of a memory's dense similarity (the rest is the context-bearing
# vector's). Compared on bench/devsets (8 sets, mean over sets of recall@5 / recall@10): 0 (the
# context-bearing vector alone) 85.8 / 94.9, 0.25 87.2 / 94.6, 0.5 90.4 / 95.4, 0.75 88.9 / 95.0,
# 1 (own text alone) 88.0 / 95.0; 0.5 also injected least off-topic. 0.5 is the plain mean.
OWN_SHARE = 0.5


def dense_vectors(vectors: np.ndarray, own: np.ndarray | None) -> np.ndarray:
    """The vectors recall ranks by: the mean of each memory's two vectors (float32).

    A memory embedded with its context (`embed_text`) also has a vector of its own text
    (`own_text`). Context dilutes a one-line fact: for "Who is my sister-in-law?" the fact
    ranked 1st by its own text and 22nd by its context-bearing vector. Its dense similarity is
    the mean of the query's cosines with the two, which is exactly the query's product with
    the mean of the two unit vectors: one vector per memory, so the recall cache holds no more
    bytes than before and every scorer (`UserIndex`, the relevance floor, `similar`) applies the
    same rule (`OWN_SHARE` says how the share was chosen). A memory without context has its
    vector in `own`: the mean is the vector itself, exactly. `own` None: every memory's vector
    is its own text's.
    """
    if own is None:
        return np.asarray(vectors, dtype=np.float32)
    base = np.asarray(vectors, np.float32)
    # base + share * (own - base): exactly `base` where the two are the same vector.
    mixed = base + np.float32(OWN_SHARE) * (np.asarray(own, np.float32) - base)
    out: np.ndarray = mixed.astype(np.float32, copy=False)
    return out


def speaker_of(provenance: Mapping[str, Any]) -> str | None:
    """Who said it, from provenance ("speaker"), if recorded."""
    value = provenance.get("speaker")
    return str(value) if value else None


def group_of(provenance: Mapping[str, Any]) -> str | None:
    """The conversation the memory came from (session, else thread), if recorded."""
    for key in ("session", "session_id", "thread_id"):
        value = provenance.get(key)
        if value:
            return str(value)
    return None


def span_of(provenance: Mapping[str, Any]) -> int:
    """How many source turns the memory covers (recall slots it uses), at least 1."""
    turns = provenance.get("dia_ids") or provenance.get("message_ids") or ()
    return max(1, len(turns)) if isinstance(turns, list | tuple) else 1


def indexed_memory(
    memory_id: str,
    item: NewMemory | MemoryRecord,
    vector: np.ndarray,
    *,
    now: datetime | None = None,
) -> IndexedMemory:
    """The `UserIndex` entry for a memory (stored, or about to be) and its `embed_text` vector.

    For a `NewMemory` the expiry is `now + ttl_days` and a missing `occurred_at` is `now`.
    """
    now = now or datetime.now(UTC)
    speaker = speaker_of(item.provenance)
    occurred = item.occurred_at or now
    if isinstance(item, MemoryRecord):
        access, expires = item.access_count, item.expires_at
    else:
        access = 0
        expires = now + timedelta(days=item.ttl_days) if item.ttl_days is not None else None
    return IndexedMemory(
        id=memory_id,
        text=index_text(item.content, speaker=speaker, occurred_at=occurred),
        vector=vector,
        kind=item.kind,
        occurred_at=occurred,
        importance=item.importance,
        access_count=access,
        expires_at=expires,
        span=span_of(item.provenance),
        context=item.context,
        speaker=speaker,
        role=role_of(item.provenance.get("role"), item.content),
        group=group_of(item.provenance),
    )


def indexed_from_record(record: MemoryRecord, vector: np.ndarray) -> IndexedMemory:
    """The `UserIndex` entry for a stored memory (what the store's preload should build)."""
    return indexed_memory(record.id, record, vector)


__all__ = [
    "dense_vectors",
    "embed_text",
    "group_of",
    "index_text",
    "indexed_from_record",
    "indexed_memory",
    "own_text",
    "span_of",
    "speaker_of",
]
