"""Chroma layouts for L2's dense leg, compared by measurement on a synthetic corpus.

    python -m bench.chroma_layout [--memories N] [--users U] [--queries Q] [--k K]
                                  [--layouts filter,per-user,sharded] [--json FILE]

L2 asks Chroma for one user's nearest memories. The layouts compared:

- `filter`: one collection per memory layer, every entry tagged with tenant and user, each
  query filtered on both (what `memory.storage.vector.VectorIndex` does).
- `per-user`: one collection per user, queried without a filter.
- `sharded`: `--shards` collections, a user's entries in the one their id hashes to, queried
  with the user filter (fewer entries to filter than one big collection, few collections).
- `langchain`: the `filter` layout through `langchain_chroma.Chroma` (the design card names it),
  when that package is importable; skipped otherwise.

The corpus is random but clustered (each user has a few topics: unit vectors around random
centres, 384 dimensions like all-MiniLM) with short generated texts: embedding 100,000 real texts
would take most of an hour on two cores and measure the model, not the index. Each layout runs
in its own process on a fresh embedded Chroma, so resident memory is its own: ingest rate,
query p50/p95, peak RSS, and recall@k against the exact top k computed in numpy (HNSW is
approximate, and a filtered HNSW search can miss more).

Measured on a shared 2-core machine (load average 4-5 from other work, so compare within a run),
top 200, 200 queries, chromadb 1.5.9 embedded, langchain-chroma 1.1.0:

    20,000 vectors / 200 users    colls  ingest/s  p50 ms  p95 ms  recall@k  peak RSS MB
    filter                            1      1011    71.8   108.9       1.0        304
    per-user                        200      1091    21.3    39.3       1.0        735
    sharded (16)                     16      2507    25.6    42.1       1.0        294
    langchain (filter layout)         1      1133    80.8   157.4       1.0        330

    100,000 vectors / 1,000 users
    filter                            1       431   211.8   626.0       1.0        677
    sharded (16)                     16      1444    63.8    83.0       1.0        677
    per-user                       1000       580   149.6   354.3       1.0       3040

Sharding by user hash is kept (`MEMORY_CHROMA_SHARDS`, 16 by default): as fast as a collection
per user at 200 users and faster at 1,000, with one collection's memory. langchain-chroma
returns the same neighbours but adds latency to the same query and a dependency, and one
wrapper per collection would be needed for shards: the index calls chromadb directly.
"""

from __future__ import annotations

import argparse
import importlib
import json
import multiprocessing as mp
import resource
import statistics
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np

DIM = 384
LAYOUTS = ("filter", "per-user", "sharded", "langchain")
TENANT = "bench"


def corpus(memories: int, users: int, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """(vectors [memories, DIM] float32 unit rows, owner user index per row)."""
    rng = np.random.default_rng(seed)
    owners = np.sort(rng.integers(0, users, size=memories))
    centres = rng.standard_normal((users, 4, DIM)).astype(np.float32)
    topic = rng.integers(0, 4, size=memories)
    vectors = centres[owners, topic] + 0.6 * rng.standard_normal((memories, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors, owners


def queries(
    vectors: np.ndarray, owners: np.ndarray, n: int, seed: int = 11
) -> list[tuple[int, np.ndarray]]:
    """Pairs of (user, query vector): one of the user's memories, perturbed; random users."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, len(vectors), size=n)
    out = []
    for row in rows:
        q = vectors[row] + 0.5 * rng.standard_normal(DIM).astype(np.float32) / np.sqrt(DIM) * 8
        out.append((int(owners[row]), (q / np.linalg.norm(q)).astype(np.float32)))
    return out


def _user(u: int) -> str:
    return f"u{u:06d}"


def _shard(user: str, shards: int) -> int:
    return zlib.crc32(user.encode()) % shards


def _collection_for(layout: str, user: str, shards: int) -> str:
    if layout == "per-user":
        return f"user_{user}"
    if layout == "sharded":
        return f"shard_{_shard(user, shards)}"
    return "episodic"


def _run_layout(layout: str, args: dict[str, Any], out: Any) -> None:
    """Child process: ingest, query, measure; send the figures back on `out`."""
    try:
        out.send(_measure(layout, args))
    except Exception as exc:  # report, don't hang the parent
        out.send({"layout": layout, "error": f"{type(exc).__name__}: {exc}"})


def _measure(layout: str, args: dict[str, Any]) -> dict[str, Any]:
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    vectors, owners = corpus(args["memories"], args["users"])
    qs = queries(vectors, owners, args["queries"])
    k, shards = args["k"], args["shards"]
    folder = tempfile.mkdtemp(prefix="lma-layout-")
    client = chromadb.PersistentClient(
        path=folder, settings=ChromaSettings(anonymized_telemetry=False)
    )
    store_layout = "filter" if layout == "langchain" else layout
    collections: dict[str, Any] = {}

    def collection(name: str) -> Any:
        if name not in collections:
            collections[name] = client.get_or_create_collection(
                name, metadata={"hnsw:space": "cosine"}, embedding_function=None
            )
        return collections[name]

    ids = [f"m{i}" for i in range(len(vectors))]
    users = [_user(int(u)) for u in owners]
    by_collection: dict[str, list[int]] = {}
    for i, user in enumerate(users):
        by_collection.setdefault(_collection_for(store_layout, user, shards), []).append(i)
    started = time.perf_counter()
    for name, rows in by_collection.items():
        for start in range(0, len(rows), 5000):
            chunk = rows[start : start + 5000]
            collection(name).add(
                ids=[ids[i] for i in chunk],
                embeddings=vectors[chunk],
                documents=[f"note {i} of {users[i]} about topic {i % 97}" for i in chunk],
                metadatas=[{"tenant_id": TENANT, "user_id": users[i]} for i in chunk],
            )
    ingest_s = time.perf_counter() - started

    search = _searcher(layout, client, collection, shards, k)
    for user, q in qs[:10]:  # warm-up: segment loads are counted in the cold figures below
        search(_user(user), q)
    latencies, recalls = [], []
    for user, q in qs:
        t0 = time.perf_counter()
        got = search(_user(user), q)
        latencies.append((time.perf_counter() - t0) * 1000.0)
        mine = np.flatnonzero(owners == user)
        exact = mine[np.argsort(-(vectors[mine] @ q))[:k]]
        want = {ids[i] for i in exact}
        recalls.append(len(want & set(got)) / max(len(want), 1))
        assert all(users[int(g[1:])] == _user(user) for g in got), "another user's memory"
    latencies.sort()
    return {
        "layout": layout,
        "collections": len(by_collection),
        "ingest_s": round(ingest_s, 2),
        "ingest_per_s": round(len(vectors) / ingest_s, 1),
        "p50_ms": round(statistics.median(latencies), 2),
        "p95_ms": round(latencies[int(0.95 * (len(latencies) - 1))], 2),
        "recall_at_k": round(float(np.mean(recalls)), 4),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def _searcher(layout: str, client: Any, collection: Any, shards: int, k: int) -> Any:
    where = lambda user: {"$and": [{"tenant_id": TENANT}, {"user_id": user}]}  # noqa: E731
    if layout == "langchain":
        # Not a dependency of the project (measured, not adopted): run the benchmark with
        # `uv run --with langchain-chroma` to include it.
        chroma = importlib.import_module("langchain_chroma").Chroma
        store = chroma(client=client, collection_name="episodic")

        def by_langchain(user: str, q: np.ndarray) -> list[str]:
            docs = store.similarity_search_by_vector_with_relevance_scores(
                q.tolist(), k=k, filter=where(user)
            )
            return [d.id for d, _ in docs if d.id is not None]

        return by_langchain

    def direct(user: str, q: np.ndarray) -> list[str]:
        name = _collection_for(layout, user, shards)
        result = collection(name).query(
            query_embeddings=[q],
            n_results=k,
            where=None if layout == "per-user" else where(user),
            include=["distances"],
        )
        return list(result["ids"][0])

    return direct


def _args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.chroma_layout",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add("--memories", type=int, default=20_000)
    add("--users", type=int, default=200)
    add("--queries", type=int, default=200)
    add("--k", type=int, default=200, help="neighbours per query (L2's candidate budget)")
    add("--shards", type=int, default=16)
    add("--layouts", default="filter,per-user,sharded,langchain")
    add("--json", type=Path, default=None, help="also write the figures here")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run each layout in its own process and print a table."""
    args = _args(argv)
    layouts = [name for name in args.layouts.split(",") if name]
    unknown = set(layouts) - set(LAYOUTS)
    if unknown:
        print(f"unknown layouts: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    settings = {k: getattr(args, k) for k in ("memories", "users", "queries", "k", "shards")}
    results = []
    ctx = mp.get_context("spawn")
    for layout in layouts:
        if layout == "langchain":
            try:
                importlib.import_module("langchain_chroma")
            except ImportError:
                results.append({"layout": layout, "skipped": "langchain-chroma not installed"})
                continue
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_run_layout, args=(layout, settings, child))
        proc.start()
        results.append(parent.recv())
        proc.join()
        print(json.dumps(results[-1]), flush=True)
    doc = {"settings": settings, "layouts": results}
    if args.json:
        args.json.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    print(f"\n{'layout':<10} {'colls':>6} {'ingest/s':>9} {'p50 ms':>8} {'p95 ms':>8} "
          f"{'recall@k':>9} {'RSS MB':>8}")  # fmt: skip
    for r in results:
        if "p50_ms" in r:
            print(f"{r['layout']:<10} {r['collections']:>6} {r['ingest_per_s']:>9} "
                  f"{r['p50_ms']:>8} {r['p95_ms']:>8} {r['recall_at_k']:>9} "
                  f"{r['peak_rss_mb']:>8}")  # fmt: skip
        else:
            print(f"{r['layout']:<10} {r.get('skipped') or r.get('error')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
