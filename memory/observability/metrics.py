"""Memory metrics: storage size, counts, recall latency, cache, hit and pollution rates.

`collect_stats` returns a JSON-able dict (for `memory-agent stats` and the admin page);
`render_prometheus` turns it into the Prometheus text exposition with `prometheus_client`
(for the `/memory/metrics` route). Latency and cache counters are this process's; sizes and
counts come from the database and cover every process. Unknown values (a rate with no data yet)
are left out of the exposition, not sent as 0.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from memory.observability.latency import RECALL_LATENCY, LatencyHistogram
from memory.recall.recaller import recaller_for
from memory.settings import Settings
from memory.storage import stats as q
from memory.storage.store import MemoryStore

CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
"""The media type of `render_prometheus`'s text (exposition format 0.0.4)."""


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


def _tier_stats(store: MemoryStore) -> dict[str, Any]:
    """Which tier served this process's recalls, L1's bytes, and Chroma's outages."""
    recaller = recaller_for(store)
    cache, health = recaller.cache, store.index_health
    return {
        "paths": dict(recaller.paths),
        "l1": {
            "bytes": cache.held_bytes,
            "budget_bytes": cache.max_bytes,
            "users": len(cache),
            "evictions": cache.evictions,
            "refused": cache.refused,
        },
        "chroma": {
            "up": not health.down,
            "outages": health.outages,
            "recoveries": health.recoveries,
            "caught_up": health.caught_up,
        },
    }


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
    latency: LatencyHistogram = RECALL_LATENCY,
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
        "recall_tiers": _tier_stats(store),
        "usage": usage,
        "pollution": polluted,
        "agent_events": events,
        "images": images,
    }


def _le(bound: float) -> str:
    """A bucket bound as Prometheus spells it ("0.25", "1.0", "+Inf")."""
    text: str = floatToGoString(bound)  # type: ignore[no-untyped-call]
    return text


def _gauge(name: str, help_text: str, value: float | None) -> Iterator[Metric]:
    """A family of one unlabelled sample; nothing when the value is unknown."""
    if value is not None:
        yield GaugeMetricFamily(name, help_text, value=float(value))


def _labelled(
    family: GaugeMetricFamily | CounterMetricFamily, samples: Mapping[tuple[str, ...], float]
) -> GaugeMetricFamily | CounterMetricFamily:
    for labels, value in samples.items():
        family.add_metric(list(labels), float(value))
    return family


class StatsCollector(Collector):
    """A `prometheus_client` collector over one `collect_stats` result."""

    def __init__(self, stats: Mapping[str, Any]):
        self.stats = stats

    def collect(self) -> Iterator[Metric]:
        """Every metric family of the stats, in a fixed order."""
        stats = self.stats
        yield self._storage()
        yield _labelled(
            GaugeMetricFamily(
                "memory_count", "Memories by kind and status.", labels=["kind", "status"]
            ),
            {(r["kind"], r["status"]): r["count"] for r in stats["memories"]["by_kind_status"]},
        )
        yield self._latency()
        yield from self._caches()
        yield from self._tiers()
        yield from self._rates()
        yield _labelled(
            GaugeMetricFamily(
                "memory_agent_events", "Agent bus events by type.", labels=["event_type"]
            ),
            {(t,): n for t, n in stats["agent_events"].items()},
        )
        images = stats.get("images") or {}
        yield from _gauge("memory_images", "Image memories stored.", images.get("images"))
        yield from _gauge(
            "memory_image_kept_bytes",
            "Bytes of images kept (thumbnails).",
            images.get("kept_bytes"),
        )

    def _storage(self) -> Metric:
        storage = self.stats["storage_bytes"]
        samples: dict[tuple[str, ...], float] = {
            ("postgres", rel): n for rel, n in storage["postgres"].items()
        }
        if storage.get("chroma") is not None:
            samples[("chroma", "all")] = storage["chroma"]
        family = GaugeMetricFamily(
            "memory_storage_bytes",
            "Bytes on disk per store and relation.",
            labels=["store", "relation"],
        )
        return _labelled(family, samples)

    def _latency(self) -> Metric:
        snap = self.stats["recall_latency_seconds"]
        return HistogramMetricFamily(
            "memory_recall_duration_seconds",
            "Recall latency in this process (embed, cache check, rank).",
            buckets=[(_le(le), float(n)) for le, n in snap["buckets"]],
            sum_value=float(snap["sum"]),
        )

    def _caches(self) -> Iterator[Metric]:
        caches = self.stats["cache"]
        yield _labelled(
            CounterMetricFamily(
                "memory_cache_hits_total", "In-process cache hits.", labels=["cache"]
            ),
            {(c,): v["hits"] for c, v in caches.items()},
        )
        yield _labelled(
            CounterMetricFamily(
                "memory_cache_misses_total", "In-process cache misses.", labels=["cache"]
            ),
            {(c,): v["misses"] for c, v in caches.items()},
        )
        yield _labelled(
            GaugeMetricFamily(
                "memory_cache_hit_ratio", "In-process cache hit rate.", labels=["cache"]
            ),
            {(c,): v["hit_rate"] for c, v in caches.items() if v["hit_rate"] is not None},
        )

    def _tiers(self) -> Iterator[Metric]:
        tiers = self.stats.get("recall_tiers")
        if not tiers:
            return
        yield _labelled(
            CounterMetricFamily(
                "memory_recall_path", "Recalls by the tier that served them.", labels=["path"]
            ),
            {(p,): n for p, n in tiers["paths"].items()},
        )
        l1, chroma = tiers["l1"], tiers["chroma"]
        yield from _gauge("memory_recall_l1_bytes", "Bytes held by the L1 cache.", l1["bytes"])
        yield from _gauge(
            "memory_recall_l1_budget_bytes", "The L1 cache's byte budget.", l1["budget_bytes"]
        )
        yield from _gauge("memory_recall_l1_users", "Users cached in L1.", l1["users"])
        yield CounterMetricFamily(
            "memory_recall_l1_evictions", "Users evicted from L1 (LRU).", value=l1["evictions"]
        )
        yield CounterMetricFamily(
            "memory_recall_l1_refused",
            "Users refused by L1 as too large (served by L2).",
            value=l1["refused"],
        )
        yield from _gauge("memory_chroma_up", "1 when Chroma answers.", float(chroma["up"]))
        yield CounterMetricFamily(
            "memory_chroma_outages", "Chroma outages seen.", value=chroma["outages"]
        )
        yield CounterMetricFamily(
            "memory_chroma_recoveries", "Chroma returns detected.", value=chroma["recoveries"]
        )
        yield CounterMetricFamily(
            "memory_chroma_caught_up",
            "Memories indexed automatically after Chroma returned.",
            value=chroma["caught_up"],
        )

    def _rates(self) -> Iterator[Metric]:
        usage, pollution = self.stats["usage"], self.stats["pollution"]
        yield from _gauge(
            "memory_injected_memories",
            "Memories injected into prompts (injection audit events).",
            usage["injected"],
        )
        yield from _gauge(
            "memory_injected_used_memories",
            "Injected memories the answer used (cited or restated).",
            usage["used"],
        )
        yield from _gauge(
            "memory_injection_hit_ratio",
            "Share of injected memories the answer used.",
            usage["hit_rate"],
        )
        yield from _gauge(
            "memory_stored_memories", "Memories ever written (audit log).", pollution["stored"]
        )
        yield _labelled(
            GaugeMetricFamily(
                "memory_polluted_memories",
                "Stored memories later superseded, deleted or flagged, by reason.",
                labels=["reason"],
            ),
            {(why,): n for why, n in pollution["by_reason"].items()},
        )
        yield from _gauge(
            "memory_pollution_ratio",
            "Share of stored memories later superseded, deleted or flagged.",
            pollution["rate"],
        )


def render_prometheus(stats: Mapping[str, Any]) -> str:
    """The text exposition (format 0.0.4) of a `collect_stats` result.

    Each call renders through a registry of its own, so concurrent scrapes and tests never
    share state through `prometheus_client`'s global default registry.
    """
    registry = CollectorRegistry(auto_describe=False)
    registry.register(StatsCollector(stats))
    return generate_latest(registry).decode("utf-8")


def chroma_dir_for(settings: Settings) -> Path | None:
    """The embedded Chroma folder, or None when a Chroma server is configured."""
    return None if settings.chroma_url else Path(settings.data_dir) / "chroma"


async def prometheus_text(
    store: MemoryStore,
    settings: Settings | None = None,
    *,
    caches: Mapping[str, CacheCounters] | None = None,
    tenant: str | None = None,
) -> str:
    """All metrics in the Prometheus text exposition format (for a `/metrics` route).

    `tenant` narrows the counts and rates to one tenant (see `collect_stats`).
    """
    settings = settings or Settings.from_env()
    stats = await collect_stats(
        store, tenant=tenant, chroma_dir=chroma_dir_for(settings), caches=caches
    )
    return render_prometheus(stats)


__all__ = [
    "CONTENT_TYPE",
    "CacheCounters",
    "StatsCollector",
    "chroma_dir_for",
    "collect_stats",
    "dir_size",
    "prometheus_text",
    "render_prometheus",
]
