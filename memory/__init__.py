"""Governed, layered memory: storage, recall, gate, working memory, consolidation.

The names most programs need, loaded on first use (importing `memory.types` must not open
the embedding model or Chroma). Each subpackage exports the rest of its own public API:
`memory.storage` (the bottom layer), `memory.recall`, `memory.gating`, `memory.working`,
`memory.longterm`, `memory.sharing`, `memory.multimodal`, `memory.observability`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.exports import lazy_exports

if TYPE_CHECKING:
    from memory.api import GovernedMemory, Recalled, Written, cite
    from memory.governed_store import GovernedStore
    from memory.retriever import MemoryRetriever
    from memory.settings import Settings, apply_privacy_defaults
    from memory.storage.store import MemoryStore, open_store
    from memory.system import freeze_long_lived, open_cache_sync, recaller, settle_process
    from memory.types import (
        Category,
        MemoryKind,
        MemoryRecord,
        NewMemory,
        Origin,
        Scope,
        ScopeError,
        ScoredMemory,
        Source,
        Status,
    )

_WHERE = {
    "GovernedMemory": ".api",
    "Recalled": ".api",
    "Written": ".api",
    "cite": ".api",
    "MemoryRetriever": ".retriever",
    "GovernedStore": ".governed_store",
    "Settings": ".settings",
    "apply_privacy_defaults": ".settings",
    "MemoryStore": ".storage.store",
    "open_store": ".storage.store",
    "freeze_long_lived": ".system",
    "open_cache_sync": ".system",
    "recaller": ".system",
    "settle_process": ".system",
    **{
        name: ".types"
        for name in (
            "Category",
            "MemoryKind",
            "MemoryRecord",
            "NewMemory",
            "Origin",
            "Scope",
            "ScopeError",
            "ScoredMemory",
            "Source",
            "Status",
        )
    },
}


__getattr__ = lazy_exports(__name__, _WHERE)


__all__ = [
    "Category",
    "GovernedMemory",
    "GovernedStore",
    "MemoryKind",
    "MemoryRecord",
    "MemoryRetriever",
    "MemoryStore",
    "NewMemory",
    "Origin",
    "Recalled",
    "Scope",
    "ScopeError",
    "ScoredMemory",
    "Settings",
    "Source",
    "Status",
    "Written",
    "apply_privacy_defaults",
    "cite",
    "freeze_long_lived",
    "open_cache_sync",
    "open_store",
    "recaller",
    "settle_process",
]
