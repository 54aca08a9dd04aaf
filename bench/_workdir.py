"""A benchmark's scratch folder, removed when the process exits.

Benchmarks start embedded PostgreSQL and Chroma in a fresh temporary folder (tens of MB each);
left behind, repeated runs fill /tmp. The removal is registered before the embedded server
starts, and `atexit` runs handlers last-in first-out, so the server (pgserver stops its own at
exit) is down before its folder goes.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path


def scratch_dir(prefix: str) -> Path:
    """A new temporary folder that is deleted at interpreter exit."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path
