"""`store.search` latency of the governed store beside LangGraph's own InMemoryStore, one run.

    python -m bench.store_search [--memories 10000] [--queries 200] [--database-url URL]
                                 [--json OUT]

One user holds `--memories` memories. The governed store (`GovernedStore.asearch` with a query:
query embedding, freshness check, the hybrid recall with its score breakdown, the item keys)
is timed warm (the user preloaded, as a session start does) and cold (that user's cache entry
dropped before each query: a load from Postgres). The baseline is LangGraph's `InMemoryStore`
with a vector index over the same MiniLM embeddings, holding the same texts, timed on the same
queries. Both embed each query with the same model, so the difference is the search itself.

The memories are bulk-written with `MemoryStore.write_many` (embed, Postgres, Chroma), not one
governed put each: a put runs the gate and the conflict search, which is what the store is for
but not what this measures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from bench._workdir import scratch_dir
from bench.recall_latency import _SUBJECTS, _pct, _text
from memory.governed_store import GovernedStore
from memory.settings import Settings, apply_privacy_defaults
from memory.storage.store import MemoryStore, open_store
from memory.system import recaller
from memory.types import NewMemory, Scope

SCOPE = Scope("bench", "u0")
NAMESPACE = ("bench", "u0", "memories")
_BATCH = 1000


def _summary(ms: list[float]) -> dict[str, float]:
    return {"p50": round(statistics.median(ms), 2), "p95": round(_pct(ms, 0.95), 2)}


async def _load(
    memory: MemoryStore, baseline: InMemoryStore, cache: dict[str, list[float]], n: int
) -> dict[str, float]:
    rng = random.Random(11)
    texts = [_text(rng, 0, i) for i in range(n)]
    started = time.perf_counter()
    for at in range(0, n, _BATCH):
        chunk = texts[at : at + _BATCH]
        for text, vector in zip(chunk, await memory.embedder.aembed(chunk), strict=True):
            cache[text] = [float(x) for x in vector]
    embed_s = time.perf_counter() - started
    started = time.perf_counter()
    for at in range(0, n, _BATCH):
        chunk = texts[at : at + _BATCH]
        await memory.write_many(SCOPE, [NewMemory(t, ttl_days=None) for t in chunk])
    governed_s = time.perf_counter() - started
    started = time.perf_counter()
    for at in range(0, n, _BATCH):
        ops = [
            PutOp(NAMESPACE, f"m{at + i}", {"content": t})
            for i, t in enumerate(texts[at : at + _BATCH])
        ]
        await baseline.abatch(ops)
    baseline_s = time.perf_counter() - started
    return {
        "embed_once_s": round(embed_s, 1),
        "governed_load_s": round(governed_s, 1),
        "inmemory_load_s": round(baseline_s, 1),
    }


async def _time(search: Callable[[str], Awaitable[Any]], queries: list[str]) -> list[float]:
    out: list[float] = []
    for query in queries:
        t0 = time.perf_counter()
        await search(query)
        out.append((time.perf_counter() - t0) * 1000)
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    """Load one user's memories into both stores and time the same searches."""
    data = scratch_dir("lma-bench-store-")
    base = Settings.from_env()
    settings = Settings(
        database_url=args.database_url,
        data_dir=data,
        embedding_model_dir=base.embedding_model_dir,
        chroma_prefix="benchstore",
    )
    async with open_store(settings) as memory:
        # Each text is embedded once and both stores load that vector: the comparison is of
        # search, and embedding 2 x 10,000 texts would only lengthen the run.
        cache: dict[str, list[float]] = {}
        model = memory.embedder
        memory.embedder = _Cached(model, cache)  # type: ignore[assignment]
        baseline = InMemoryStore(
            index={"dims": 384, "embed": _Cached(model, cache), "fields": ["content"]}
        )
        governed = GovernedStore(memory)
        load = await _load(memory, baseline, cache, args.memories)
        memory.embedder = model  # searches embed their queries with the model itself
        rng = random.Random(7)
        queries = [
            f"what did they decide about {rng.choice(_SUBJECTS)}?" for _ in range(args.queries)
        ]
        await recaller(memory).preload(SCOPE)

        async def warm(q: str) -> Any:
            return await governed.asearch(NAMESPACE, query=q, limit=10)

        async def cold(q: str) -> Any:
            memory.cache.invalidate(SCOPE)
            return await governed.asearch(NAMESPACE, query=q, limit=10)

        async def inmemory(q: str) -> Any:
            return await baseline.asearch(NAMESPACE, query=q, limit=10)

        await warm(queries[0]), await inmemory(queries[0])  # first-call set-up is not latency
        report = {
            "memories": args.memories,
            "queries": args.queries,
            **load,
            "governed_warm_ms": _summary(await _time(warm, queries)),
            "inmemory_indexed_ms": _summary(await _time(inmemory, queries)),
            "governed_cold_ms": _summary(await _time(cold, queries[: min(len(queries), 30)])),
        }
    report["p50_ratio_inmemory_over_governed_warm"] = round(
        report["inmemory_indexed_ms"]["p50"] / max(report["governed_warm_ms"]["p50"], 1e-9), 2
    )
    report["p95_ratio_inmemory_over_governed_warm"] = round(
        report["inmemory_indexed_ms"]["p95"] / max(report["governed_warm_ms"]["p95"], 1e-9), 2
    )
    print(json.dumps(report), flush=True)
    return report


class _Cached(Embeddings):
    """The project's embedder, as LangChain `Embeddings` too, reusing vectors already made."""

    def __init__(self, model: Any, cache: dict[str, list[float]]) -> None:
        self.model, self.cache = model, cache
        self.name = getattr(model, "name", "minilm")

    def _fill(self, texts: list[str], vectors: Any) -> list[list[float]]:
        fresh = iter([[float(x) for x in v] for v in vectors])
        return [self.cache[t] if t in self.cache else next(fresh) for t in texts]

    def embed(self, texts: list[str]) -> Any:
        import numpy as np

        missing = [t for t in texts if t not in self.cache]
        made = self.model.embed(missing) if missing else []
        return np.asarray(self._fill(texts, made), dtype=np.float32)

    async def aembed(self, texts: list[str]) -> Any:
        import numpy as np

        missing = [t for t in texts if t not in self.cache]
        made = await self.model.aembed(missing) if missing else []
        return np.asarray(self._fill(texts, made), dtype=np.float32)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [list(map(float, v)) for v in self.embed(texts)]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return [list(map(float, v)) for v in await self.aembed(texts)]

    async def aembed_query(self, text: str) -> list[float]:
        return (await self.aembed_documents([text]))[0]


def main() -> None:
    """Parse arguments, run, print (and optionally write) the figures."""
    apply_privacy_defaults()
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--database-url", default=None, help="default: embedded PostgreSQL")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    report = asyncio.run(run(args))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
