"""Storage, the bottom layer: Postgres as system of record, the Chroma index, embeddings, deletion.

Imports no other memory subpackage; the layers above call these public names.

Names are imported on first use, so importing the package stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.exports import lazy_exports

if TYPE_CHECKING:
    from memory.storage.availability import (
        MemoryStoreUnavailable,
    )
    from memory.storage.cache_sync import (
        CacheSync,
        Change,
        Invalidator,
        open_cache_sync,
    )
    from memory.storage.chroma_lock import (
        ChromaInUseError,
    )
    from memory.storage.db import (
        Connection,
        Database,
        Row,
    )
    from memory.storage.embedding import (
        Embedder,
        Vectors,
        embed_text,
        get_embedder,
    )
    from memory.storage.indexer import (
        BackgroundIndexer,
    )
    from memory.storage.listener import (
        PgListener,
    )
    from memory.storage.model_files import (
        EmbeddingError,
        ModelDownloadError,
    )
    from memory.storage.pg import (
        DatabaseError,
        database_url,
        open_pool,
        release_embedded_databases,
    )
    from memory.storage.store import (
        MemoryInputError,
        MemoryStore,
        RowCache,
        StoreCaches,
        open_store,
    )
    from memory.storage.threads import (
        ThreadRegistry,
    )
    from memory.storage.vector import (
        Nearest,
        VectorIndex,
        VectorIndexError,
    )

_WHERE = {
    "MemoryInputError": ".store",
    "MemoryStore": ".store",
    "open_store": ".store",
    "RowCache": ".store",
    "StoreCaches": ".store",
    "ThreadRegistry": ".threads",
    "Connection": ".db",
    "Database": ".db",
    "Row": ".db",
    "database_url": ".pg",
    "DatabaseError": ".pg",
    "open_pool": ".pg",
    "release_embedded_databases": ".pg",
    "Nearest": ".vector",
    "VectorIndex": ".vector",
    "VectorIndexError": ".vector",
    "embed_text": ".embedding",
    "Embedder": ".embedding",
    "get_embedder": ".embedding",
    "Vectors": ".embedding",
    "EmbeddingError": ".model_files",
    "ModelDownloadError": ".model_files",
    "CacheSync": ".cache_sync",
    "Change": ".cache_sync",
    "Invalidator": ".cache_sync",
    "open_cache_sync": ".cache_sync",
    "PgListener": ".listener",
    "BackgroundIndexer": ".indexer",
    "MemoryStoreUnavailable": ".availability",
    "ChromaInUseError": ".chroma_lock",
}


__getattr__ = lazy_exports(__name__, _WHERE)


__all__ = [
    "BackgroundIndexer",
    "CacheSync",
    "Change",
    "ChromaInUseError",
    "Connection",
    "Database",
    "DatabaseError",
    "Embedder",
    "EmbeddingError",
    "Invalidator",
    "MemoryInputError",
    "MemoryStore",
    "MemoryStoreUnavailable",
    "ModelDownloadError",
    "Nearest",
    "PgListener",
    "Row",
    "RowCache",
    "StoreCaches",
    "ThreadRegistry",
    "VectorIndex",
    "VectorIndexError",
    "Vectors",
    "database_url",
    "embed_text",
    "get_embedder",
    "open_cache_sync",
    "open_pool",
    "open_store",
    "release_embedded_databases",
]
