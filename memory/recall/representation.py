"""How a memory is represented for search: its index text, its embedding text, its index entry.

The store calls these when it writes and when it preloads a user's index, and the LoCoMo
benchmark calls the same functions, so what the benchmark measures is what the agent searches.

Measured on LoCoMo (categories 1-4, recall@10): "speaker: text" beats the bare text for BM25
(58.6 against 55.4) and for MiniLM (44.9 against 30.0); embedding the memory together with its
context (the neighbouring turns) is worth about +10 points when fused with BM25.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from memory.recall.retrieval import IndexedMemory
from memory.types import MemoryRecord, NewMemory

# MiniLM truncates at 256 word pieces; the memory itself must come first so long context can
# only cut context, never the memory.
_MAX_CONTEXT_CHARS = 900
# Chosen on bench/devsets (long assistant replies beside one-line facts): context up to the
# memory's own length (at least 60 characters) against 2x/160 and none; see bench/README.md.
_CONTEXT_PER_OWN = 1
_MIN_CONTEXT_CHARS = 60


def _labelled(content: str, speaker: str | None) -> str:
    content = " ".join(content.split())
    return f"{speaker.strip()}: {content}" if speaker and speaker.strip() else content


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
    return _labelled(content, speaker)


def embed_text(
    content: str,
    *,
    speaker: str | None = None,
    occurred_at: datetime | None = None,
    context: str = "",
) -> str:
    """The text a memory's vector is computed from: "speaker: content", then its context."""
    del occurred_at
    own = _labelled(content, speaker)
    # Context may not outweigh the memory: a one-line fact beside a 900-character assistant
    # reply would otherwise be embedded as the reply.
    budget = min(_MAX_CONTEXT_CHARS, max(_CONTEXT_PER_OWN * len(own), _MIN_CONTEXT_CHARS))
    context = " ".join(context.split())[:budget]
    return f"{own}\n{context}" if context else own


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
        group=group_of(item.provenance),
    )


def indexed_from_record(record: MemoryRecord, vector: np.ndarray) -> IndexedMemory:
    """The `UserIndex` entry for a stored memory (what the store's preload should build)."""
    return indexed_memory(record.id, record, vector)
