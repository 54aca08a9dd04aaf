"""Consolidation benchmark: 10,000 episodic memories across 100 users, without a model.

Seeds the users through the store (real embeddings, Postgres rows, Chroma entries; not timed),
then runs the `consolidate` graph over all of them (`all=true`, batches of 50), runs it again
(nothing left to do) and rolls the first run back. Prints wall time, memories/s, the per-step
counts and peak memory (process peak RSS; `--tracemalloc` adds the Python-allocation peak of
the run, at the cost of a slower run). Starts its own embedded
PostgreSQL (`pgserver`) and embedded Chroma in a temporary folder unless given URLs.

    python -m bench.consolidation [--users 100] [--database-url URL] [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import time
import tracemalloc
from pathlib import Path
from typing import Any

from agent.consolidate_graph import RECURSION_LIMIT, build_graph
from bench._consolidation_data import user_memories
from bench._workdir import scratch_dir
from memory.longterm.consolidation import rollback
from memory.settings import Settings, apply_privacy_defaults
from memory.storage.pg import embedded_database_url
from memory.storage.store import MemoryStore, open_store
from memory.types import Scope

_MODEL_DIR = Path(__file__).resolve().parents[1].parent / "shared/models/all-MiniLM-L6-v2"


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


async def _seed(store: MemoryStore, users: int, tenant: str) -> int:
    total = 0
    for u in range(users):
        items = user_memories(seed=u)
        await store.write_many(Scope(tenant, f"user{u:04d}"), items, reason="benchmark seed")
        total += len(items)
    return total


async def _consolidate(store: MemoryStore, batch_size: int, trace: bool) -> dict[str, Any]:
    config: Any = {"configurable": {"memory_store": store}, "recursion_limit": RECURSION_LIMIT}
    if trace:
        tracemalloc.start()
    started = time.perf_counter()
    out = await build_graph().compile().ainvoke({"all": True, "batch_size": batch_size}, config)
    wall = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1] / 2**20 if trace else None
    if trace:
        tracemalloc.stop()
    return {"wall_s": wall, "tracemalloc_peak_mb": peak, "output": out}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    """Seed, consolidate, consolidate again (nothing left to do), roll back, and report."""
    workdir = scratch_dir("lma-bench-consolidation-")
    url = args.database_url or await asyncio.to_thread(embedded_database_url, workdir)
    settings = Settings(
        database_url=url,
        chroma_url=args.chroma_url,
        data_dir=workdir,
        embedding_model_dir=Path(args.model_dir),
        chroma_prefix=f"bench{int(time.time())}",
    )
    tenant = f"bench{int(time.time())}"
    async with open_store(settings, reindex_on_start=False) as store:
        t0 = time.perf_counter()
        memories = await _seed(store, args.users, tenant)
        seed_s = time.perf_counter() - t0
        rss_before = _rss_mb()
        first = await _consolidate(store, args.batch_size, args.tracemalloc)
        second = await _consolidate(store, args.batch_size, False)
        t0 = time.perf_counter()
        undone = await rollback(store, first["output"]["run_id"])
        rollback_s = time.perf_counter() - t0
    out = first.pop("output")
    return {
        "users": args.users,
        "memories": memories,
        "seed_s": round(seed_s, 1),
        "wall_s": round(first["wall_s"], 2),
        "memories_per_s": round(memories / first["wall_s"], 1),
        "tracemalloc_peak_mb": _round(first["tracemalloc_peak_mb"]),
        "peak_rss_mb": round(_rss_mb(), 1),
        "rss_before_run_mb": round(rss_before, 1),
        "counts": out["counts"],
        "errors": out["errors"],
        "run_id": out["run_id"],
        "second_run_s": round(second["wall_s"], 2),
        "second_run_counts": second["output"]["counts"],
        "rollback_s": round(rollback_s, 2),
        "rolled_back": {
            "users": undone.users,
            "restored": undone.restored,
            "deleted": undone.deleted,
        },
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the figures."""
    apply_privacy_defaults()
    parser = argparse.ArgumentParser(
        prog="python -m bench.consolidation",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--users", type=int, default=100, help="users of 100 episodes each")
    parser.add_argument("--batch-size", type=int, default=50)
    parser.add_argument("--database-url", help="use this PostgreSQL instead of pgserver")
    parser.add_argument("--chroma-url", help="use this Chroma server instead of embedded")
    parser.add_argument("--model-dir", default=str(_MODEL_DIR), help="all-MiniLM-L6-v2 folder")
    parser.add_argument("--tracemalloc", action="store_true", help="also trace Python allocations")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)
    report = asyncio.run(run(args))
    print(
        f"{report['memories']:,} episodic memories, {report['users']} users "
        f"(seeded in {report['seed_s']} s, not timed)"
    )
    print(f"consolidation: {report['wall_s']} s wall, {report['memories_per_s']:,} memories/s")
    print(
        f"peak RSS {report['peak_rss_mb']} MB (before the run {report['rss_before_run_mb']} MB)"
        + (
            f", tracemalloc peak {report['tracemalloc_peak_mb']} MB"
            if report["tracemalloc_peak_mb"]
            else ""
        )
    )
    print(f"counts: {json.dumps(report['counts'])}")
    print(f"second run (nothing left to do): {report['second_run_s']} s")
    print(f"rollback of the first run: {report['rollback_s']} s {report['rolled_back']}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 1 if report["errors"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
