"""The import benchmark: `memory-agent import`'s path over the benchmark's data file.

Runs `memory.gating.ingest.history.import_messages` raw and gated on fresh embedded stores (or
the given database), each as its own user, and beside them, in the same run, a baseline: the
same raw memories written one at a time (`MemoryStore.write`, one embedding call, transaction
and Chroma upsert per memory), as the chat path stores a turn. The machine's load average is
recorded before and after, since on a shared machine every figure depends on what else runs.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from tqdm import tqdm

from bench._workdir import scratch_dir
from memory.gating.gate import GatePolicy
from memory.gating.ingest.history import file_digest, import_messages, read_messages, to_memory
from memory.gating.privacy import PrivacyFilter
from memory.settings import Settings
from memory.storage.store import MemoryStore, open_store
from memory.types import Scope

# The one-at-a-time baseline is slow by nature; a few hundred memories give a stable rate.
BASELINE_LIMIT = 256


def _cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system


async def _per_item(
    store: MemoryStore, scope: Scope, messages: list[Any], progress: bool
) -> tuple[float, float]:
    """(memories/s, memories per CPU second) writing the raw memories one at a time."""
    policy, privacy = GatePolicy(), PrivacyFilter()
    items = []
    for i in range(len(messages)):
        item, _ = to_memory(messages, i, source="baseline", gated=False, policy=policy,
                            privacy=privacy)  # fmt: skip
        if item is not None:
            items.append(item)
    started, cpu = time.perf_counter(), _cpu_seconds()
    for item in tqdm(items, desc="import baseline (one at a time)", unit="mem",
                     disable=not progress, file=sys.stderr):  # fmt: skip
        await store.write(scope, item, reason="import")
    wall, cpu = time.perf_counter() - started, _cpu_seconds() - cpu
    return len(items) / max(wall, 1e-9), len(items) / max(cpu, 1e-9)


async def import_benchmark(
    path: Path,
    settings: Settings,
    database_url: str | None,
    batch_size: int = 256,
    limit: int | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Import the turns of `path` (the first `limit`) raw and gated, plus the baseline."""
    data = scratch_dir("lma-import-")
    settings = replace(
        settings,
        database_url=database_url,
        data_dir=data,
        chroma_prefix=f"imp{int(time.time())}",
    )
    messages = read_messages(path)[:limit]
    source, run = file_digest(path), int(time.time())
    load_before = os.getloadavg()
    out: dict[str, Any] = {"batch_size": batch_size, "messages": len(messages)}
    async with open_store(settings) as store:
        # The first ONNX run allocates its buffers; no contestant should pay for that.
        await store.embedder.aembed(["warm-up"] * 8)
        for mode in ("raw", "gated"):
            cpu_before = _cpu_seconds()
            with tqdm(total=len(messages), desc=f"import {mode}", unit="msg",
                      disable=not progress, file=sys.stderr) as bar:  # fmt: skip
                report = await import_messages(
                    store,
                    Scope("import-bench", f"{mode}{run}"),
                    messages,
                    source=source,
                    gated=mode == "gated",
                    batch_size=batch_size,
                    progress=bar.update,
                )
            cpu = _cpu_seconds() - cpu_before
            out[mode] = {
                "memories": report.stored,
                "seconds": round(report.seconds, 2),
                "memories_per_s": round(report.per_second, 1),
                "messages_per_s": round(report.messages / max(report.seconds, 1e-9), 1),
                # This process's CPU time (all threads): unlike wall time it hardly depends on
                # what else runs, so memories per CPU second times the cores is the rate an
                # otherwise idle machine would reach (Postgres and Chroma server time excluded).
                "cpu_seconds": round(cpu, 2),
                "memories_per_cpu_s": round(report.stored / max(cpu, 1e-9), 1),
            }
        baseline, baseline_cpu = await _per_item(
            store, Scope("import-bench", f"one{run}"), messages[:BASELINE_LIMIT], progress
        )
    load_after = os.getloadavg()
    out.update(
        {
            # The headline figure stays the raw import's, as before.
            "memories": out["raw"]["memories"],
            "seconds": out["raw"]["seconds"],
            "memories_per_s": out["raw"]["memories_per_s"],
            "gated_memories_per_s": out["gated"]["memories_per_s"],
            "baseline_one_at_a_time_per_s": round(baseline, 1),
            "baseline_one_at_a_time_per_cpu_s": round(baseline_cpu, 1),
            "baseline_memories": min(len(messages), BASELINE_LIMIT),
            "load_1m_before": round(load_before[0], 2),
            "load_1m_after": round(load_after[0], 2),
            "cpus": os.cpu_count(),
        }
    )
    return out


def main(argv: list[str] | None = None) -> int:
    """`python -m bench._locomo_import --data FILE [--limit N]`: the import benchmark alone."""
    import argparse
    import asyncio
    import json

    from memory.settings import apply_privacy_defaults

    apply_privacy_defaults()
    parser = argparse.ArgumentParser(prog="python -m bench._locomo_import")
    parser.add_argument("--data", type=Path, required=True, help="a LoCoMo-format JSON file")
    parser.add_argument("--limit", type=int, default=None, help="only the first N turns")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--database-url", default=None, help="Postgres (default: embedded)")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    result = asyncio.run(
        import_benchmark(
            args.data,
            Settings.from_env(),
            args.database_url,
            args.batch_size,
            args.limit,
            progress=not args.no_progress,
        )  # fmt: skip
    )
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
