"""One process per embedded Chroma folder: an OS file lock taken when the folder is opened.

Embedded Chroma (`PersistentClient`) keeps its vector segment and caches in the memory of the
process that opened it and writes them back on its own schedule: two processes on one folder
(the CLI beside a running `langgraph dev`) each believe their own copy, and one's writes are
lost to the other's without an error, while Postgres marks them indexed. So the first process
to open a folder holds an exclusive `flock` on `<folder>/.memory-agent.lock` for the rest of its
life (chromadb keeps the opened folder cached for that long, so releasing it earlier would not
make sharing safe), and any other process is refused with `ChromaInUseError`, which says to run
a Chroma server and set `CHROMA_URL`.

Within a process the lock is re-entrant: every store and index on the folder shares it. The OS
releases it when the process ends, however it ends, so a crash leaves no stale lock behind.
Children of the holder that touch the folder's SQLite file directly (the log purge in
`memory.offload`'s worker processes) never open Chroma and never take the lock. A process forked
from the holder does not inherit the right to open Chroma: it tries the lock itself and is
refused while the holder lives.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from pathlib import Path

LOCK_NAME = ".memory-agent.lock"

_guard = threading.Lock()
# Folder (resolved) -> (pid that took the lock, its descriptor), kept open for the process's life.
_held: dict[str, tuple[int, int]] = {}


class ChromaInUseError(RuntimeError):
    """Another process has this embedded Chroma folder open."""


def claim_embedded(folder: Path) -> None:
    """Take (or confirm this process holds) the lock of the embedded Chroma in `folder`.

    Blocking file I/O: call it from a worker thread inside a server. Raises `ChromaInUseError`
    naming the holder's process id and `CHROMA_URL` when another process holds it.
    """
    folder.mkdir(parents=True, exist_ok=True)
    key = str(folder.resolve())
    pid = os.getpid()
    with _guard:
        held = _held.get(key)
        if held is not None and held[0] == pid:
            return
        path = Path(key) / LOCK_NAME
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise ChromaInUseError(
                f"the embedded Chroma in {key} is open in another process{holder}; embedded"
                " Chroma serves one process at a time. To use it from several (the CLI beside"
                " `langgraph dev`, several workers), run a Chroma server (`chroma run --path"
                f" {key}` once no process has it open) and set CHROMA_URL to its address in"
                " every process, or stop the other process first."
            ) from None
        except BaseException:
            os.close(fd)
            raise
        # Who holds it, for the next process's message; the lock, not this text, is what counts.
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{pid}\n".encode(), 0)
        _held[key] = (pid, fd)


def _holder(fd: int) -> str:
    with contextlib.suppress(OSError, ValueError):
        text = os.pread(fd, 32, 0).decode("ascii").strip()
        if text.isdigit():
            return f" (process {int(text)})"
    return ""


__all__ = ["LOCK_NAME", "ChromaInUseError", "claim_embedded"]
