"""Purging deleted entries from an embedded Chroma's log while that Chroma is in use.

The embedded Chroma runs in this process with its own copy of SQLite. The purge opens the same
file with Python's sqlite3; from a thread of this process that broke SQLite's locking (POSIX
locks belong to the process) and corrupted the database within a few purges. It must run in
another process, and the Chroma beside it must not notice.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import chromadb
import numpy as np
import pytest

from memory import offload
from memory.settings import Settings
from memory.storage.vector_log import log_file, purge_log

PURGES = 20  # each of three runs of the in-thread purge failed within this many


@pytest.fixture
def chroma_dir(tmp_path: Path) -> Path:
    return tmp_path / "data" / "chroma"


async def test_purging_the_log_beside_a_busy_embedded_chroma_breaks_nothing(
    chroma_dir: Path,
) -> None:
    client = chromadb.PersistentClient(
        path=str(chroma_dir), settings=chromadb.Settings(anonymized_telemetry=False)
    )
    col = client.get_or_create_collection("purge_beside", metadata={"hnsw:space": "cosine"})
    rng = np.random.default_rng(7)
    # Entries written the way an older version did, with text in their metadata, then deleted.
    doomed = [f"old{i}" for i in range(40)]
    col.upsert(
        ids=doomed,
        embeddings=rng.random((40, 8)).tolist(),
        metadatas=[{"text": f"secret note {i}"} for i in range(40)],
    )
    col.delete(ids=doomed)

    errors: list[str] = []
    stop = threading.Event()

    def busy() -> None:  # Chroma in use throughout: writes, searches, deletions
        i = 0
        while not stop.is_set():
            ids = [f"live{i}_{j}" for j in range(20)]
            try:
                col.upsert(ids=ids, embeddings=rng.random((20, 8)).tolist(),
                           metadatas=[{"owner": "x"}] * 20)  # fmt: skip
                col.query(query_embeddings=rng.random((1, 8)).tolist(), n_results=5)
                if i % 3 == 0:
                    col.delete(ids=ids[:10])
            except Exception as exc:  # every failure is the finding
                errors.append(f"{type(exc).__name__}: {exc}")
            i += 1

    settings = Settings(data_dir=chroma_dir.parent)
    assert log_file(settings) == chroma_dir / "chroma.sqlite3"
    worker = threading.Thread(target=busy, daemon=True)
    try:
        # The old entries' texts leave the log (before the load: Chroma trims its log by
        # itself once enough writes have persisted, which would take them too).
        assert await asyncio.wait_for(purge_log(settings, doomed), timeout=60) == 40
        worker.start()
        for n in range(PURGES):
            await asyncio.wait_for(purge_log(settings, [f"live{n}_{j}" for j in range(10)]), 60)
    finally:
        stop.set()
        if worker.is_alive():
            worker.join(timeout=60)
        offload.shutdown()

    assert errors == []
    written = client.get_collection("purge_beside").count()
    assert written > 0
    with sqlite3.connect(chroma_dir / "chroma.sqlite3") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        left = conn.execute(
            "SELECT count(*) FROM embeddings_queue WHERE metadata LIKE '%secret note%'"
        ).fetchone()
    assert left == (0,)
