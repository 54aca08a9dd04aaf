"""Purge deleted texts from Chroma's write-ahead log (`embeddings_queue` in `chroma.sqlite3`).

Chroma appends every add, update and delete to a log table and trims it only once its vector
segment has persisted past those entries (every `hnsw:sync_threshold` writes, 1,000 by default),
so a deleted document's text stays in the log, and in the file's free pages, long after the
delete. Chroma offers no API to trim it (`chroma vacuum` needs the database closed and keeps
entries the vector segment has not persisted yet). What this does instead, on the sqlite file
itself:

- blanks the metadata (which holds the document text) of every log entry of the deleted ids:
  the vector segment replays only vectors and ids, so the log stays valid;
- merges the full-text index, which otherwise keeps deleted rows' trigrams until a merge;
- `VACUUM`s the file so freed pages holding the old text are dropped. This rewrites the whole
  file under an exclusive lock, so a deletion leaves it to `storage.compaction`, which runs it
  at most once per interval (`compact_log`); `purge_log(..., compact=True)` still does both.

This project no longer sends memory text to Chroma (see `vector`); the purge is for entries an
older version wrote with their text, and for the owner metadata every log entry carries.

This reaches the embedded Chroma's file, and a Chroma server's when it runs on this host and
`MEMORY_CHROMA_SERVER_PATH` names its persist directory; otherwise the caller reports the log as
out of reach.

The purge runs in a separate process (`memory.offload.run_in_process`), never in this one. An
embedded Chroma holds the file through its own copy of SQLite, and two copies of SQLite in one
process break its locking: POSIX file locks belong to the process, so closing Python's
connection dropped the locks Chroma's connections held, and each side then wrote under locks it
no longer had. Measured beside an embedded Chroma that kept writing and reading: purges in a
thread of its process failed with "disk I/O error" or "database disk image is malformed" within
20 calls in each of three runs (one of them hung), and a run of 300 left the collection lost
("malformed database schema ... orphan index"); 100 purges from a child process: no error and
`PRAGMA integrity_check` ok. Across processes SQLite's locks hold.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from memory.offload import run_in_process
from memory.settings import Settings

_DELETE_OPERATION = 3  # Chroma's Operation.DELETE in the log's `operation` column
_BUSY_TIMEOUT_MS = 10_000  # Chroma holds the file briefly per write; wait rather than fail
_CHUNK = 500  # ids per statement, under sqlite's bound-parameter limit


def log_file(settings: Settings) -> Path | None:
    """The `chroma.sqlite3` this process can reach, or None (a remote Chroma server)."""
    if settings.chroma_url:
        folder = settings.chroma_server_path
    else:
        folder = Path(settings.data_dir) / "chroma"
    if folder is None:
        return None
    path = folder / "chroma.sqlite3"
    return path if path.exists() else None


def _purge(path: Path, ids: Sequence[str], compact: bool = True) -> int:
    blanked = 0
    conn = sqlite3.connect(path, timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    try:
        for start in range(0, len(ids), _CHUNK):
            chunk = list(ids[start : start + _CHUNK])
            marks = ",".join("?" * len(chunk))
            cursor = conn.execute(
                f"UPDATE embeddings_queue SET metadata = NULL WHERE operation <> ?"
                f" AND metadata IS NOT NULL AND id IN ({marks})",
                [_DELETE_OPERATION, *chunk],
            )
            blanked += cursor.rowcount
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        if "embedding_fulltext_search" in tables:
            conn.execute(
                "INSERT INTO embedding_fulltext_search(embedding_fulltext_search)"
                " VALUES ('optimize')"
            )
        if compact:
            conn.execute("VACUUM")
    finally:
        conn.close()
    return blanked


def _vacuum(path: Path) -> None:
    conn = sqlite3.connect(path, timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    try:
        conn.execute("VACUUM")
    finally:
        conn.close()


async def purge_log(settings: Settings, ids: Sequence[str], *, compact: bool = True) -> int | None:
    """Blank the log entries of `ids` (`compact`: then VACUUM); how many, None if unreachable."""
    path = log_file(settings)
    if path is None:
        return None
    return await run_in_process(_purge, path, list(ids), compact)


async def compact_log(settings: Settings) -> bool:
    """VACUUM Chroma's SQLite file (its free pages may hold blanked text); False if unreachable."""
    path = log_file(settings)
    if path is None:
        return False
    await run_in_process(_vacuum, path)
    return True


__all__ = ["compact_log", "log_file", "purge_log"]
