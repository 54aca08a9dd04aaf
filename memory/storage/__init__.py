"""Storage: Postgres as system of record, the Chroma index, embeddings, caches, deletion, export."""
