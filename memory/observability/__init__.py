"""Metrics: storage size, counts, latency histogram, cache hit rate, hit and pollution rate.

Names are imported on first use: storage records recall latency into `latency`, and `metrics`
reads storage, so importing this package must not load `metrics` eagerly (an import cycle).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.exports import lazy_exports

if TYPE_CHECKING:
    from memory.observability.hit_rate import record_injection, used_memory_ids
    from memory.observability.latency import RECALL_LATENCY, LatencyHistogram, quantile_bound
    from memory.observability.metrics import (
        CONTENT_TYPE,
        CacheCounters,
        StatsCollector,
        chroma_dir_for,
        collect_stats,
        dir_size,
        prometheus_text,
        render_prometheus,
    )

_HOME = {
    "record_injection": ".hit_rate",
    "used_memory_ids": ".hit_rate",
    "RECALL_LATENCY": ".latency",
    "LatencyHistogram": ".latency",
    "quantile_bound": ".latency",
    "CONTENT_TYPE": ".metrics",
    "CacheCounters": ".metrics",
    "StatsCollector": ".metrics",
    "chroma_dir_for": ".metrics",
    "collect_stats": ".metrics",
    "dir_size": ".metrics",
    "prometheus_text": ".metrics",
    "render_prometheus": ".metrics",
}

__all__ = [
    "CONTENT_TYPE",
    "RECALL_LATENCY",
    "CacheCounters",
    "LatencyHistogram",
    "StatsCollector",
    "chroma_dir_for",
    "collect_stats",
    "dir_size",
    "prometheus_text",
    "quantile_bound",
    "record_injection",
    "render_prometheus",
    "used_memory_ids",
]


__getattr__ = lazy_exports(__name__, _HOME)
