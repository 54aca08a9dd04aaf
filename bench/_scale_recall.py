"""Recall latency by tier for `python -m bench.scale`: warm (L1), cold (L2), a very large user.

`bench.scale` calls `await recall_latency_section(args)`; every attribute it reads from `args`
is optional (defaults in brackets, `--small` ones second):

- `small` [False]: the quick sizes below.
- `database_url` [embedded Postgres], `chroma_url` [embedded Chroma].
- `recall_users` [1,000 | 100] users of `recall_per_user` [100 | 100] memories each.
- `big_user_memories` [200,000 | 5,000]: one user beyond L1's per-user limit (the limit is set
  below their size for the run), recalled through L2 only.
- `recall_queries` [300 | 100] timed recalls per measurement.
- `l1_budget_bytes` [512 MiB]: the L1 budget; every user is preloaded and the process's RSS
  and L1's measured bytes are reported against it.

The corpus is synthetic: random-but-clustered unit vectors (384-d, four topics per user) with
short generated texts, written through `MemoryStore.write_many` with the vectors given
(embedding 100,000 texts would take most of an hour on two cores). Queries are real texts
embedded by the model, so each timing includes the query's embedding, as a turn's does. The
figures are latencies; the vectors carry no meaning, so no recall quality is claimed here.
"""

from __future__ import annotations

import os
import random
import statistics
import tempfile
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from memory.recall.recaller import Recaller
from memory.settings import Settings
from memory.storage.store import MemoryStore, open_store
from memory.system import recaller
from memory.types import NewMemory, Scope

DIM = 384
TENANT = "scale"
_SUBJECTS = [
    "Python", "the Lisbon trip", "the Q3 report", "the garden", "my sister", "yoga",
    "the budget", "the dentist", "our database", "dark mode", "Rust", "the API",
]  # fmt: skip
_VERBS = ["prefers", "decided on", "asked about", "booked", "reviewed", "finished", "scheduled"]
_DETAILS = ["on Monday", "before the deadline", "with two colleagues", "after lunch", "again"]
_QUERIES = [
    "what did I decide about the budget?",
    "when is the dentist appointment?",
    "what do I prefer for the API?",
    "did I book the Lisbon trip?",
    "what happened with our database?",
]


def _texts(rng: random.Random, n: int, user: int) -> list[str]:
    return [
        f"User {user} {rng.choice(_VERBS)} {rng.choice(_SUBJECTS)} {rng.choice(_DETAILS)}"
        f" (note {i})"
        for i in range(n)
    ]


def _vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    centres = rng.standard_normal((4, DIM)).astype(np.float32)
    out = centres[rng.integers(0, 4, size=n)] + 0.6 * rng.standard_normal((n, DIM)).astype(
        np.float32
    )
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def _rss() -> int:
    """The resident set of the current process in bytes (Linux: /proc/self/statm)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE")


def _pcts(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "n": len(ordered),
        "p50": round(statistics.median(ordered), 2),
        "p95": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
    }


async def _write_user(
    store: MemoryStore, scope: Scope, n: int, seed: int, batch: int = 1000
) -> None:
    rng, nrng = random.Random(seed), np.random.default_rng(seed)
    texts, vectors = _texts(rng, n, seed), _vectors(nrng, n)
    for start in range(0, n, batch):
        chunk = slice(start, start + batch)
        await store.write_many(
            scope, [NewMemory(t) for t in texts[chunk]], reason="bench", vectors=vectors[chunk]
        )


async def _timed(r: Recaller, scope: Scope, query: str) -> tuple[float, str]:
    started = time.perf_counter()
    found = await r.recall_traced(scope, query, k=8, record_access=False)
    return (time.perf_counter() - started) * 1000.0, found.path


async def recall_latency_section(args: Any) -> dict[str, Any]:
    """Warm and cold recall p50/p95, a very large user through L2, RSS against L1's budget."""
    small = bool(getattr(args, "small", False))
    users = int(getattr(args, "recall_users", None) or (100 if small else 1000))
    per_user = int(getattr(args, "recall_per_user", None) or 100)
    big = int(getattr(args, "big_user_memories", None) or (5_000 if small else 200_000))
    queries = int(getattr(args, "recall_queries", None) or (100 if small else 300))
    budget = int(getattr(args, "l1_budget_bytes", None) or 512 * 1024 * 1024)
    base = Settings.from_env()
    settings = replace(
        base,
        database_url=getattr(args, "database_url", None) or base.database_url,
        chroma_url=getattr(args, "chroma_url", None) or base.chroma_url,
        data_dir=Path(tempfile.mkdtemp(prefix="lma-scale-recall-")),
        chroma_prefix=f"scale{uuid.uuid4().hex[:8]}",
        recall_cache_bytes=budget,
        recall_cache_user_max=min(base.recall_cache_user_max, max(big - 1, 1)),
    )
    out: dict[str, Any] = {"users": users, "per_user": per_user, "memories": users * per_user}
    started = time.perf_counter()
    async with open_store(settings, reindex_on_start=False) as store:
        scopes = [Scope(TENANT, f"u{i}") for i in range(users)]
        t0 = time.perf_counter()
        for i, scope in enumerate(scopes):
            await _write_user(store, scope, per_user, seed=i)
        out["ingest_s"] = round(time.perf_counter() - t0, 1)
        r = recaller(store)
        r.preload_on_miss = False  # each measurement chooses its tier
        rng = random.Random(1)
        picks = [(rng.choice(scopes), rng.choice(_QUERIES)) for _ in range(queries)]

        for scope, query in picks[:10]:  # warm-up: model, pools, Chroma segments
            await _timed(r, scope, query)
        cold, paths = [], {}
        for scope, query in picks:
            r.cache.invalidate(scope)
            ms, path = await _timed(r, scope, query)
            cold.append(ms)
            paths[path] = paths.get(path, 0) + 1
        out["cold_l2_ms"] = {**_pcts(cold), "paths": paths}

        rss_before = _rss()
        t0 = time.perf_counter()
        for scope in scopes:
            await r.preload(scope)
        out["preload_all_s"] = round(time.perf_counter() - t0, 1)
        rss_after = _rss()
        out["l1"] = {
            "budget_bytes": budget,
            "held_bytes": r.cache.held_bytes,
            "users_cached": len(r.cache),
            "evictions": r.cache.evictions,
            "bytes_per_memory": round(r.cache.bytes_per_memory()),
            "rss_before_preload_mb": round(rss_before / 2**20, 1),
            "rss_after_preload_mb": round(rss_after / 2**20, 1),
            "within_budget": r.cache.held_bytes <= budget,
        }
        warm, paths = [], {}
        cached = [s for s in scopes if r.cache.peek(s) is not None]
        for _, query in picks:
            scope = rng.choice(cached)
            ms, path = await _timed(r, scope, query)
            warm.append(ms)
            paths[path] = paths.get(path, 0) + 1
        out["warm_l1_ms"] = {**_pcts(warm), "paths": paths}

        whale = Scope(TENANT, "big")
        t0 = time.perf_counter()
        await _write_user(store, whale, big, seed=10_000_019)
        ingest_big = time.perf_counter() - t0
        loaded = await r.preload(whale)
        times, paths = [], {}
        for _, query in picks:
            ms, path = await _timed(r, whale, query)
            times.append(ms)
            paths[path] = paths.get(path, 0) + 1
        out["big_user"] = {
            "memories": big,
            "ingest_s": round(ingest_big, 1),
            "loaded_into_l1": loaded,
            "cached": r.cache.peek(whale) is not None,
            **_pcts(times),
            "paths": paths,
        }
    out["seconds"] = round(time.perf_counter() - started, 1)
    return out


def main() -> int:
    """Run the section alone: `python -m bench._scale_recall [--small] [--json FILE]`."""
    import argparse
    import asyncio
    import json

    from memory.settings import apply_privacy_defaults

    apply_privacy_defaults()
    parser = argparse.ArgumentParser(prog="python -m bench._scale_recall")
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--recall-users", type=int, default=None)
    parser.add_argument("--recall-per-user", type=int, default=None)
    parser.add_argument("--big-user-memories", type=int, default=None)
    parser.add_argument("--recall-queries", type=int, default=None)
    parser.add_argument("--l1-budget-bytes", type=int, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    result = asyncio.run(recall_latency_section(args))
    text = json.dumps(result, indent=2)
    if args.json:
        args.json.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

__all__ = ["recall_latency_section"]
