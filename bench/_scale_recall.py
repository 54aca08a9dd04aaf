"""Recall latency by tier for `python -m bench.scale`: warm (L1), cold (L2), a very large user.

`bench.scale` calls `await recall_latency_section(args)`; every attribute it reads from `args`
is optional:

- `small` [False]: the quick run (scale "small" only, under a minute of loading).
- `scale` [both "100k" and "1m"; "small" with `small`]: the scales to run, each alone (when
  there are several, each in a child process of its own, so RSS is that scale's alone):
  "small" (100 users x 100 memories, a 5,000-memory user), "100k" (1,000 x 100, a
  200,000-memory user), "1m" (10,000 x 100, a 200,000-memory user).
- `database_url` [embedded Postgres], `chroma_url` [embedded Chroma]. `bench.scale` passes its
  `chroma run` server, so the process's RSS is the agent's, not Chroma's.
- `recall_users`, `recall_per_user`, `big_user_memories` (0: no large user), `recall_queries`
  [300 | 100]: override a scale's sizes.
- `l1_budget_bytes` [512 MiB]: the L1 budget; after the cold run every user is touched (loaded
  into L1, least recently used evicted beyond the budget), and the process's RSS and L1's bytes
  are reported against it.

Loading is what a bulk import would do, not a turn's write path: synthetic rows (clustered
random 384-d unit vectors, four topics per user, short generated texts) go to Postgres with
COPY (`memory.storage.bulk`) with their recall features computed beforehand, and to Chroma in
batches of 5,000 per shard; each phase is timed (`load_s`). Queries are real texts embedded by
the model, so each timing includes the query's embedding, as a turn's does. The figures are
latencies; the vectors carry no meaning, so no recall quality is claimed here.

JSON keys per scale (`scales {name: ...}`): users, per_user, memories, load_s {generate,
features, postgres, chroma, total}, cold_l2_ms {n, p50, p95, paths}, touch {users, seconds},
l1 {budget_bytes, held_bytes, side_bytes, users_cached, evictions, bytes_per_memory,
rss_start_mb, rss_before_touch_mb, rss_after_touch_mb, rss_limit_mb (budget + 300 MB),
rss_within_limit}, warm_l1_ms {n, p50, p95, paths}, big_user {memories, load_s,
loaded_into_l1, cached, n, p50, p95, paths, filtered_layers (the layers searched with the owner
filter), unbounded_filter {n, p50, p95, filtered_layers}: the same user with no bound on
filtered searches, as before, over the first 30 queries}, seconds; and targets {warm_p95_ms,
cold_p95_ms, big_user_p95_ms}. Each latency block also has `without_embedding` {n, p50,
p95}: the same recalls with the query embedded beforehand (the tier's own cost; the embedding
is the same for every tier, ~10-30 ms for MiniLM on this machine's shared CPUs).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from bench._workdir import scratch_dir
from memory.recall.features import encode, features_key
from memory.recall.recaller import Recaller
from memory.recall.representation import indexed_memory
from memory.recall.retrieval import features_of
from memory.settings import Settings
from memory.storage.bulk import BulkMemory, analyze, copy_memories
from memory.storage.store import MemoryStore, open_store
from memory.system import recaller, settle_process
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


def _trim() -> None:
    """Give the loading phase's freed memory back to the OS (glibc keeps it otherwise).

    A serving process never bulk-loads a corpus: without this its RSS would carry the
    generator's garbage into the figure that is compared with L1's budget.
    """
    gc.collect()
    with contextlib.suppress(OSError):  # not glibc: the figure includes the loader's leftovers
        ctypes.CDLL("libc.so.6").malloc_trim(0)


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


BASELINE_QUERIES = 30
SCALES: dict[str, dict[str, int]] = {
    "small": {"users": 100, "per_user": 100, "big": 5_000, "queries": 100},
    "100k": {"users": 1_000, "per_user": 100, "big": 200_000, "queries": 300},
    "1m": {"users": 10_000, "per_user": 100, "big": 200_000, "queries": 300},
}
TARGETS = {"warm_p95_ms": 10.0, "cold_p95_ms": 50.0, "big_user_p95_ms": 50.0}
RSS_MARGIN = 300 * 2**20
_BASE_TIME = datetime(2025, 1, 6, 9, tzinfo=UTC)


class _Phases:
    """Seconds spent per load phase, summed over chunks."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {"generate": 0.0, "features": 0.0, "postgres": 0.0,
                                          "chroma": 0.0}  # fmt: skip

    def add(self, name: str, began: float) -> float:
        now = time.perf_counter()
        self.seconds[name] += now - began
        return now

    def report(self) -> dict[str, float]:
        out = {k: round(v, 1) for k, v in self.seconds.items()}
        out["total"] = round(sum(self.seconds.values()), 1)
        return out


async def _load(
    store: MemoryStore, users: Sequence[tuple[Scope, int, int]], phases: _Phases
) -> None:
    """Write (scope, memories, seed) users: Postgres by COPY, Chroma in big batches."""
    began = time.perf_counter()
    items: list[BulkMemory] = []
    for scope, n, seed in users:
        rng, nrng = random.Random(seed), np.random.default_rng(seed)
        texts, vectors = _texts(rng, n, seed), _vectors(nrng, n)
        for i, (text, vector) in enumerate(zip(texts, vectors, strict=True)):
            at = _BASE_TIME + timedelta(hours=i)
            items.append(BulkMemory(scope, uuid.uuid4().hex, text, at, vector))
    began = phases.add("generate", began)
    with_features = []
    for m in items:
        item = indexed_memory(m.id, NewMemory(m.content, occurred_at=m.occurred_at), m.vector)
        key = features_key(item.text, item.context, item.occurred_at)
        with_features.append(replace(m, recall_features=encode(features_of(item), key)))
    began = phases.add("features", began)
    await copy_memories(store.pool, with_features, model=store.embedder.name,
                        indexed_at=datetime.now(UTC))  # fmt: skip
    began = phases.add("postgres", began)
    await store.index.upsert_many_users(
        "episodic", [m.scope for m in items], [m.id for m in items],
        np.vstack([m.vector for m in items]),
    )  # fmt: skip
    phases.add("chroma", began)


async def _load_users(
    store: MemoryStore, scopes: Sequence[Scope], per_user: int, phases: _Phases, chunk: int
) -> None:
    for start in range(0, len(scopes), chunk):
        part = [(s, per_user, start + i) for i, s in enumerate(scopes[start : start + chunk])]
        await _load(store, part, phases)
        print(f"  loaded {start + len(part):,}/{len(scopes):,} users"
              f" ({phases.report()['total']:.0f} s)", flush=True)  # fmt: skip


async def _timed(r: Recaller, scope: Scope, query: str) -> tuple[float, str]:
    # The queries repeat, and the embedder remembers recent texts: forget them, so each timing
    # pays for a new query's embedding as a turn with new words does.
    memo = getattr(r.store.embedder, "memo", None)
    if memo is not None:
        memo.clear()
    started = time.perf_counter()
    found = await r.recall_traced(scope, query, k=8, record_access=False)
    return (time.perf_counter() - started) * 1000.0, found.path


_VECTORS: dict[str, np.ndarray] = {}


async def _timed_ranked(r: Recaller, scope: Scope, query: str) -> float:
    """The same recall with the query already embedded: the tier's own cost."""
    if query not in _VECTORS:
        _VECTORS[query] = (await r.store.embedder.aembed([query]))[0]
    started = time.perf_counter()
    await r.recall_traced(scope, query, k=8, record_access=False, query_vector=_VECTORS[query])
    return (time.perf_counter() - started) * 1000.0


async def recall_latency_section(args: Any) -> dict[str, Any]:
    """Warm and cold recall p50/p95, a very large user through L2, RSS against L1's budget."""
    small = bool(getattr(args, "small", False))
    chosen = getattr(args, "scale", None) or (["small"] if small else ["100k", "1m"])
    if isinstance(chosen, str):
        chosen = [chosen]
    out: dict[str, Any] = {"scales": {}, "targets": TARGETS}
    # After other sections in this process (`bench.scale`'s full run) a scale runs in a child
    # too: their leftovers counted in the RSS compared with L1's budget, a process's history
    # again rather than the budget (100k, RSS after touching every user: 793.5 MB in the
    # process that had run the other sections, 734.4 in a child, 769.8 with the section alone).
    alone = len(chosen) == 1 and not getattr(args, "after_other_sections", False)
    for name in chosen:
        if not alone:  # the child says which scale it runs
            out["scales"][name] = await _in_child(args, name)
        else:
            print(f"recall_latency: scale {name} ...", flush=True)
            out["scales"][name] = await _one_scale(args, name)
    return out


_FORWARDED = ("recall_users", "recall_per_user", "big_user_memories", "recall_queries",
              "l1_budget_bytes")  # fmt: skip


async def _in_child(args: Any, scale: str) -> dict[str, Any]:
    """Run one scale in a fresh interpreter, so its RSS owes nothing to the scales before it.

    In one process the 1M scale started at 863 MB: nothing of the 100k scale was still
    referenced, but the heap it had grown stayed with the process (glibc returns little of a
    fragmented heap, even after `malloc_trim`), so the figure compared with L1's budget
    measured that history instead of the budget.
    """
    with tempfile.TemporaryDirectory(prefix="lma-scale-child-") as tmp:
        result = Path(tmp) / "scale.json"
        argv = [sys.executable, "-m", "bench._scale_recall", "--scale", scale]
        argv += ["--json", str(result)]
        for name in _FORWARDED:
            value = getattr(args, name, None)
            if value is not None:
                argv += [f"--{name.replace('_', '-')}", str(value)]
        # The servers go by environment, as `Settings.from_env` reads them: a URL may carry a
        # password, and a process's arguments are visible to every local user.
        env = dict(os.environ)
        for name, var in (("database_url", "DATABASE_URL"), ("chroma_url", "CHROMA_URL")):
            if value := getattr(args, name, None):
                env[var] = str(value)
        child = await asyncio.create_subprocess_exec(*argv, env=env)
        if await child.wait() != 0:
            raise RuntimeError(f"recall_latency: scale {scale} failed (exit {child.returncode})")
        scales: dict[str, Any] = json.loads(result.read_text(encoding="utf-8"))["scales"]
        return dict(scales[scale])


def _arg(args: Any, name: str, default: int) -> int:
    value = getattr(args, name, None)
    return default if value is None else int(value)


async def _one_scale(args: Any, scale: str) -> dict[str, Any]:
    sizes = SCALES[scale]
    users = _arg(args, "recall_users", sizes["users"])
    per_user = _arg(args, "recall_per_user", sizes["per_user"])
    big = _arg(args, "big_user_memories", sizes["big"])
    queries = _arg(args, "recall_queries", sizes["queries"])
    budget = _arg(args, "l1_budget_bytes", 512 * 1024 * 1024)
    base = Settings.from_env()
    settings = replace(
        base,
        database_url=getattr(args, "database_url", None) or base.database_url,
        chroma_url=getattr(args, "chroma_url", None) or base.chroma_url,
        data_dir=scratch_dir("lma-scale-recall-"),
        chroma_prefix=f"scale{uuid.uuid4().hex[:8]}",
        recall_cache_bytes=budget,
        # The large user must not fit L1 (it is measured through L2); no large user: as set.
        recall_cache_user_max=(
            min(base.recall_cache_user_max, big - 1) if big > 1 else base.recall_cache_user_max
        ),
    )
    tenant = f"scale-{scale}-{uuid.uuid4().hex[:6]}"
    out: dict[str, Any] = {"users": users, "per_user": per_user, "memories": users * per_user}
    started = time.perf_counter()
    rss_start = _rss()
    async with open_store(settings, reindex_on_start=False) as store:
        scopes = [Scope(tenant, f"u{i}") for i in range(users)]
        phases = _Phases()
        await _load_users(store, scopes, per_user, phases, chunk=max(1, 50_000 // per_user))
        t0 = time.perf_counter()
        await analyze(store.pool)
        phases.seconds["postgres"] += time.perf_counter() - t0
        out["load_s"] = phases.report()
        r = recaller(store)
        r.preload_on_miss = False  # each measurement chooses its tier
        _trim()
        settle_process()  # as a server does once its store is open
        rng = random.Random(1)
        picks = [(rng.choice(scopes), rng.choice(_QUERIES)) for _ in range(queries)]

        for scope, query in picks[:10]:  # warm-up: model, pools, Chroma segments
            await _timed(r, scope, query)
        cold: list[float] = []
        paths: dict[str, int] = {}
        cold_ranked = []
        for scope, query in picks:
            r.cache.invalidate(scope)
            ms, path = await _timed(r, scope, query)
            cold.append(ms)
            paths[path] = paths.get(path, 0) + 1
        for scope, query in picks:
            r.cache.invalidate(scope)
            cold_ranked.append(await _timed_ranked(r, scope, query))
        out["cold_l2_ms"] = {**_pcts(cold), "paths": paths,
                             "without_embedding": _pcts(cold_ranked)}  # fmt: skip
        print(f"  cold L2: {out['cold_l2_ms']}", flush=True)

        _trim()
        rss_before = _rss()
        t0 = time.perf_counter()
        for i, scope in enumerate(scopes):  # touch every user: L1 loads and evicts
            await r.preload(scope)
            if (i + 1) % 1000 == 0:
                print(f"  touched {i + 1:,} users ({time.perf_counter() - t0:.0f} s)", flush=True)
        out["touch"] = {"users": len(scopes), "seconds": round(time.perf_counter() - t0, 1)}
        rss_after = _rss()
        limit = budget + RSS_MARGIN
        out["l1"] = {
            "budget_bytes": budget,
            "held_bytes": r.cache.held_bytes,
            "side_bytes": r.cache.side_bytes,
            "users_cached": len(r.cache),
            "evictions": r.cache.evictions,
            "bytes_per_memory": round(r.cache.bytes_per_memory()),
            "rss_start_mb": round(rss_start / 2**20, 1),
            "rss_before_touch_mb": round(rss_before / 2**20, 1),
            "rss_after_touch_mb": round(rss_after / 2**20, 1),
            "rss_limit_mb": round(limit / 2**20, 1),
            "rss_within_limit": rss_after <= limit,
            "within_budget": r.cache.held_bytes <= budget,
        }
        print(f"  L1 after touching: {out['l1']}", flush=True)
        warm, paths = [], {}
        cached = [s for s in scopes if r.cache.peek(s) is not None]
        for _, query in picks:
            scope = rng.choice(cached)
            ms, path = await _timed(r, scope, query)
            warm.append(ms)
            paths[path] = paths.get(path, 0) + 1
        warm_ranked = [await _timed_ranked(r, rng.choice(cached), q) for _, q in picks]
        out["warm_l1_ms"] = {**_pcts(warm), "paths": paths,
                             "without_embedding": _pcts(warm_ranked)}  # fmt: skip
        print(f"  warm L1: {out['warm_l1_ms']}", flush=True)

        if big > 0:
            whale = Scope(tenant, "big")
            big_phases = _Phases()
            for start in range(0, big, 50_000):
                part = min(50_000, big - start)
                await _load(store, [(whale, part, 10_000_019 + start)], big_phases)
            t0 = time.perf_counter()
            await analyze(store.pool)
            big_phases.seconds["postgres"] += time.perf_counter() - t0
            loaded = await r.preload(whale)
            times, paths = [], {}
            for _, query in picks:
                ms, path = await _timed(r, whale, query)
                times.append(ms)
                paths[path] = paths.get(path, 0) + 1
            big_ranked = [await _timed_ranked(r, whale, q) for _, q in picks]
            # The same user, same run, as before the filtered search was bounded: a layer
            # whose nearest entries are mostly other users' is then searched with the owner
            # filter, on every query. Fewer queries: each may take seconds.
            unbounded = Recaller(store, cache=r.cache)
            unbounded.preload_on_miss = False
            unbounded.filtered_search_max = 1 << 62
            before = [(await _timed(unbounded, whale, q))[0] for _, q in picks[:BASELINE_QUERIES]]
            out["big_user"] = {
                "memories": big,
                "without_embedding": _pcts(big_ranked),
                "load_s": big_phases.report(),
                "loaded_into_l1": loaded,
                "cached": r.cache.peek(whale) is not None,
                **_pcts(times),
                "paths": paths,
                "filtered_layers": sorted(r.filtered_layers(whale)),
                "unbounded_filter": {**_pcts(before),
                                     "filtered_layers": sorted(unbounded.filtered_layers(whale))},
            }  # fmt: skip
            print(f"  big user: {out['big_user']}", flush=True)
    out["seconds"] = round(time.perf_counter() - started, 1)
    return out


def main() -> int:
    """Run the section alone: `python -m bench._scale_recall [--small] [--json FILE]`."""
    import argparse

    from memory.settings import apply_privacy_defaults

    apply_privacy_defaults()
    parser = argparse.ArgumentParser(prog="python -m bench._scale_recall")
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--scale", nargs="+", choices=list(SCALES), default=None)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--chroma-url", default=None)
    parser.add_argument("--recall-users", type=int, default=None)
    parser.add_argument("--recall-per-user", type=int, default=None)
    parser.add_argument("--big-user-memories", type=int, default=None)
    parser.add_argument("--recall-queries", type=int, default=None)
    parser.add_argument("--l1-budget-bytes", type=int, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    result = asyncio.run(recall_latency_section(args))
    text = json.dumps(result, indent=2)
    if args.json:  # the figures were printed as each was measured
        args.json.write_text(text, encoding="utf-8")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

__all__ = ["recall_latency_section"]
