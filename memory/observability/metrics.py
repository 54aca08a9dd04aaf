"""Memory metrics (seeds 000 §6.3 and 002): size, counts, latency, cache and hit rates.

`collect_stats` returns a JSON-able dict (for `memory-agent stats`); `prometheus_text` renders it
in the Prometheus text format (for the `/metrics` route). Latency and cache counters are this
process's; sizes and counts come from the database and cover every process.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from memory.observability import metrics_queries as q
from memory.observability.metrics_histogram import RECALL_LATENCY, Histogram
from memory.observability.metrics_prometheus import render_prometheus
from memory.recall.recaller import recaller_for
from memory.settings import Settings
from memory.storage.store import MemoryStore


class CacheCounters(Protocol):
    """Anything with hit and miss counters (`RecallCache`)."""

    hits: int
    misses: int


def dir_size(path: Path) -> int:
    """Bytes of the regular files under `path` (0 when it does not exist)."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += (Path(root) / name).stat().st_size
            except OSError:  # a file Chroma removed while we walked
                continue
    return total


def _cache_stats(caches: Mapping[str, CacheCounters]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name, cache in caches.items():
        total = cache.hits + cache.misses
        out[name] = {
            "hits": cache.hits,
            "misses": cache.misses,
            "hit_rate": cache.hits / total if total else None,
        }
    return out


def _memory_stats(rows: list[tuple[str, str, int]]) -> dict[str, Any]:
    by_kind: dict[str, int] = {}
    by_status: dict[str, int] = {}
    for kind, status, n in rows:
        by_kind[kind] = by_kind.get(kind, 0) + n
        by_status[status] = by_status.get(status, 0) + n
    return {
        "total": sum(n for _, _, n in rows),
        "by_kind": by_kind,
        "by_status": by_status,
        "by_kind_status": [{"kind": k, "status": s, "count": n} for k, s, n in rows],
    }


async def collect_stats(
    store: MemoryStore,
    *,
    tenant: str | None = None,
    chroma_dir: Path | None = None,
    caches: Mapping[str, CacheCounters] | None = None,
    latency: Histogram = RECALL_LATENCY,
) -> dict[str, Any]:
    """Every metric as a JSON-able dict; `tenant` narrows counts and rates to one tenant.

    `chroma_dir` is the embedded Chroma folder (None with a Chroma server, whose size is not
    ours to measure); `caches` adds named caches (e.g. profiles) to the recall cache.
    """
    async with store.pool.acquire() as conn:
        sizes = await q.table_sizes(conn)
        counts = await q.memory_counts(conn, tenant)
        usage = await q.injection_usage(conn, tenant)
        polluted = await q.pollution(conn, tenant)
        events = await q.agent_event_counts(conn, tenant)
        images = await q.image_counts(conn, tenant)
    chroma = await asyncio.to_thread(dir_size, chroma_dir) if chroma_dir is not None else None
    return {
        "tenant": tenant,
        "storage_bytes": {
            "postgres": sizes,
            "postgres_total": sum(sizes.values()),
            "chroma": chroma,
        },
        "memories": _memory_stats(counts),
        "recall_latency_seconds": latency.snapshot(),
        "cache": _cache_stats({"recall": recaller_for(store).cache, **(caches or {})}),
        "usage": usage,
        "pollution": polluted,
        "agent_events": events,
        "images": images,
    }


def chroma_dir_for(settings: Settings) -> Path | None:
    """The embedded Chroma folder, or None when a Chroma server is configured."""
    return None if settings.chroma_url else Path(settings.data_dir) / "chroma"


async def prometheus_text(
    store: MemoryStore,
    settings: Settings | None = None,
    *,
    caches: Mapping[str, CacheCounters] | None = None,
) -> str:
    """All metrics in the Prometheus text exposition format (for a `/metrics` route)."""
    settings = settings or Settings.from_env()
    stats = await collect_stats(store, chroma_dir=chroma_dir_for(settings), caches=caches)
    return render_prometheus(stats)


__all__ = ["chroma_dir_for", "collect_stats", "dir_size", "prometheus_text", "render_prometheus"]
