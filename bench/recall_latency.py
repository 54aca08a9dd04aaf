"""Recall latency and ingest throughput at 1k / 10k / 100k memories across many users.

    python -m bench.recall_latency [--users 1000] [--per-user 100] [--queries 300]
                                   [--database-url URL] [--json OUT]

Memories are written through `MemoryStore.write_many` (embed → Postgres → Chroma → indexed_at)
into one store; at each checkpoint it times `Recaller.recall` for random users (query
embedding + freshness check + search + ranking), warm (every user preloaded, as a session start
does) and cold (that user's cache entry dropped first: served by L2, which ranks all of a user's
rows from Postgres when they are no more than `MEMORY_RECALL_L2_CANDIDATES`, else Chroma's and
Postgres's candidates; nothing is preloaded meanwhile), and, as the
baseline measured in the same run, a plain Chroma query filtered on tenant+user over the same
collection. The second (name) hop's cost: the same queries, embedded beforehand, recalled
with and without it, alternately first (`ranking_{warm,cold}_hop_ms`,
`ranking_{warm,cold}_no_hop_ms`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench._workdir import scratch_dir
from memory.recall.ranking import RankingWeights
from memory.settings import Settings, apply_privacy_defaults
from memory.storage.store import MemoryStore, open_store
from memory.system import recaller
from memory.types import NewMemory, Scope

_SUBJECTS = [
    "Python",
    "Rust",
    "the Lisbon trip",
    "the Q3 report",
    "dark mode",
    "the API",
    "our database",
    "the garden",
    "my sister",
    "the dentist",
    "yoga",
    "the budget",
]
_VERBS = [
    "prefers",
    "decided on",
    "asked about",
    "failed to deploy",
    "booked",
    "reviewed",
    "wants weekly updates on",
    "complained about",
    "finished",
    "scheduled",
]
_DETAILS = [
    "on Monday",
    "before the deadline",
    "with two colleagues",
    "for 45 minutes",
    "after the outage",
    "in room 12",
    "using version 3.2",
    "at 9am",
    "twice",
    "again",
]


def _text(rng: random.Random, user: int, i: int) -> str:
    return (
        f"User {user} {rng.choice(_VERBS)} {rng.choice(_SUBJECTS)} "
        f"{rng.choice(_DETAILS)} (note {i}, ref {rng.randint(1000, 9999)})"
    )


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _ingest(store: MemoryStore, users: range, per_user: int, seed: int) -> float:
    rng = random.Random(seed)
    start = time.perf_counter()
    for user in users:
        items = [NewMemory(_text(rng, user, i), ttl_days=None) for i in range(per_user)]
        await store.write_many(Scope("bench", f"u{user}"), items)
    return len(users) * per_user / (time.perf_counter() - start)


async def _time_recall(store: MemoryStore, n_users: int, queries: int, cold: bool) -> list[float]:
    rng = random.Random(7)
    out: list[float] = []
    for _ in range(queries):
        scope = Scope("bench", f"u{rng.randrange(n_users)}")
        if cold:
            store.cache.invalidate(scope)
        recaller(store).preload_on_miss = not cold
        query = f"what did they decide about {rng.choice(_SUBJECTS)}?"
        t0 = time.perf_counter()
        await recaller(store).recall(scope, query, k=10, record_access=False)
        out.append((time.perf_counter() - t0) * 1000)
    return out


async def _time_hop(
    store: MemoryStore, n_users: int, queries: int, cold: bool
) -> tuple[list[float], list[float]]:
    """Recall with and without the second hop on the same queries, alternately first.

    The query is embedded beforehand (both would pay the same), so the difference is the
    ranking; alternating which runs first spreads the machine's load drift over both.
    """
    rng = random.Random(11)
    on, off = RankingWeights(), replace(RankingWeights(), hop=0.0)
    times: dict[bool, list[float]] = {True: [], False: []}
    for i in range(queries):
        scope = Scope("bench", f"u{rng.randrange(n_users)}")
        query = f"what did they decide about {rng.choice(_SUBJECTS)}?"
        vector = (await store.embedder.aembed([query]))[0]
        for hop in (True, False) if i % 2 == 0 else (False, True):
            if cold:
                store.cache.invalidate(scope)
            recaller(store).preload_on_miss = not cold
            t0 = time.perf_counter()
            await recaller(store).recall_traced(
                scope,
                query,
                k=10,
                weights=on if hop else off,
                record_access=False,
                query_vector=vector,
            )
            times[hop].append((time.perf_counter() - t0) * 1000)
    return times[True], times[False]


async def _time_chroma(store: MemoryStore, n_users: int, queries: int) -> list[float]:
    rng = random.Random(7)
    out: list[float] = []
    for _ in range(queries):
        scope = Scope("bench", f"u{rng.randrange(n_users)}")
        query = f"what did they decide about {rng.choice(_SUBJECTS)}?"
        t0 = time.perf_counter()
        vector = (await store.embedder.aembed([query]))[0]
        await store.index.query(scope, vector, k=10, layers=("episodic",))
        out.append((time.perf_counter() - t0) * 1000)
    return out


def _summary(ms: list[float]) -> dict[str, float]:
    return {"p50": round(statistics.median(ms), 2), "p95": round(_pct(ms, 0.95), 2)}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    """Ingest in stages and time recall at each checkpoint."""
    data = scratch_dir("lma-bench-")
    settings = Settings.from_env()
    settings = Settings(
        database_url=args.database_url,
        data_dir=data,
        embedding_model_dir=settings.embedding_model_dir,
        chroma_prefix="bench",
    )
    report: dict[str, Any] = {"checkpoints": []}
    async with open_store(settings) as store:
        done = 0
        target = args.users * args.per_user
        for total in sorted({c for c in (1_000, 10_000) if c < target} | {target}):
            n_users = max(1, total // args.per_user)
            rate = await _ingest(store, range(done, n_users), args.per_user, seed=total)
            done = n_users
            for user in range(n_users):  # warm each user's recall index before timing
                await recaller(store).preload(Scope("bench", f"u{user}"))
            warm = await _time_recall(store, n_users, args.queries, cold=False)
            cold = await _time_recall(store, n_users, min(args.queries, 100), cold=True)
            chroma = await _time_chroma(store, n_users, min(args.queries, 100))
            # The second (name) hop's cost per recall: the same queries with and without it.
            for user in range(n_users):  # the cold timings dropped them: warm them again
                await recaller(store).preload(Scope("bench", f"u{user}"))
            hop_warm = await _time_hop(store, n_users, args.queries, cold=False)
            hop_cold = await _time_hop(store, n_users, min(args.queries, 100), cold=True)
            point = {
                "memories": total,
                "users": n_users,
                "ingest_per_s": round(rate, 1),
                "recall_warm_ms": _summary(warm),
                "recall_cold_ms": _summary(cold),
                "chroma_filtered_ms": _summary(chroma),
                "ranking_warm_hop_ms": _summary(hop_warm[0]),
                "ranking_warm_no_hop_ms": _summary(hop_warm[1]),
                "ranking_cold_hop_ms": _summary(hop_cold[0]),
                "ranking_cold_no_hop_ms": _summary(hop_cold[1]),
            }
            point["p95_ratio_chroma_over_warm"] = round(
                point["chroma_filtered_ms"]["p95"] / max(point["recall_warm_ms"]["p95"], 1e-9), 1
            )
            report["checkpoints"].append(point)
            print(json.dumps(point), flush=True)
    return report


def main() -> None:
    """Parse arguments, run, print (and optionally write) the figures."""
    apply_privacy_defaults()
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--per-user", type=int, default=100)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--database-url", default=None, help="default: embedded PostgreSQL")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    report = asyncio.run(run(args))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
