"""The import benchmark: `memory-agent import`'s path (raw) over the benchmark's data file.

Runs `memory.gating.ingest.history.import_messages` on fresh embedded stores (or the given
database) and reports memories per second, with the machine's load average before and after,
since on a shared machine the figure depends on what else runs.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from memory.gating.ingest.history import file_digest, import_messages, read_messages
from memory.settings import Settings
from memory.storage.store import open_store
from memory.types import Scope


async def import_benchmark(
    path: Path,
    settings: Settings,
    database_url: str | None,
    batch_size: int = 256,
    limit: int | None = None,
) -> dict[str, Any]:
    """Import the turns of `path` (the first `limit`) as one user, raw; memories/s and load."""
    data = Path(tempfile.mkdtemp(prefix="lma-import-"))
    settings = replace(
        settings,
        database_url=database_url,
        data_dir=data,
        chroma_prefix=f"imp{int(time.time())}",
    )
    messages = read_messages(path)[:limit]
    load_before = os.getloadavg()
    async with open_store(settings) as store:
        report = await import_messages(
            store,
            Scope("import-bench", f"u{int(time.time())}"),
            messages,
            source=file_digest(path),
            gated=False,
            batch_size=batch_size,
        )
    load_after = os.getloadavg()
    return {
        "memories": report.stored,
        "seconds": round(report.seconds, 2),
        "memories_per_s": round(report.per_second, 1),
        "batch_size": batch_size,
        "load_1m_before": round(load_before[0], 2),
        "load_1m_after": round(load_after[0], 2),
        "cpus": os.cpu_count(),
    }
