"""The recall latency histogram: a `prometheus_client` histogram in a registry of its own.

Each process (server worker, CLI) has its own, a scraper sums them. The histogram lives in a
private `CollectorRegistry` rather than the library's global default one, so several of them (one
per test, a fresh measurement window after `reset`) never clash over the metric name.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import prometheus_client

# Recall targets roughly 50-100 ms: buckets resolve 1 ms to 2.5 s around that.
DEFAULT_BUCKETS: tuple[float, ...] = (
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
)  # fmt: skip


class LatencyHistogram:
    """Observations in cumulative `le` buckets (inclusive upper bounds), plus sum and count."""

    def __init__(self, name: str, help_text: str, buckets: Sequence[float] = DEFAULT_BUCKETS):
        bounds = sorted(float(b) for b in buckets)
        if not bounds or bounds != sorted(set(bounds)):
            raise ValueError("buckets must be distinct numbers")
        self.name = name
        self.help = help_text
        self._bounds = tuple(bounds)
        self._histogram = self._fresh()

    def _fresh(self) -> prometheus_client.Histogram:
        return prometheus_client.Histogram(
            self.name,
            self.help,
            buckets=self._bounds,
            registry=prometheus_client.CollectorRegistry(auto_describe=True),
        )

    def observe(self, seconds: float) -> None:
        """Record one observation."""
        self._histogram.observe(seconds)

    @contextmanager
    def time(self) -> Iterator[None]:
        """Observe how long the block takes (also when it raises)."""
        with self._histogram.time():
            yield

    def reset(self) -> None:
        """Forget every observation (tests, or a fresh measurement window)."""
        self._histogram = self._fresh()

    def snapshot(self) -> dict[str, Any]:
        """Cumulative buckets `[[le, count], ...]` ending with +Inf, sum, count, and p50/p95."""
        cumulative: list[list[float]] = []
        total_sum = 0.0
        for family in self._histogram.collect():
            for sample in family.samples:
                if sample.name.endswith("_bucket"):
                    cumulative.append([float(sample.labels["le"]), int(sample.value)])
                elif sample.name.endswith("_sum"):
                    total_sum = sample.value
        cumulative.sort(key=lambda bucket: bucket[0])
        return {
            "buckets": cumulative,
            "sum": total_sum,
            "count": int(cumulative[-1][1]),
            "p50_le": quantile_bound(cumulative, 0.5),
            "p95_le": quantile_bound(cumulative, 0.95),
        }


def quantile_bound(cumulative: Sequence[Sequence[float]], q: float) -> float | None:
    """The smallest bucket bound holding at least a share `q` of observations (None if empty)."""
    total = cumulative[-1][1] if cumulative else 0
    if not total:
        return None
    for bound, count in cumulative:
        if count >= q * total:
            return float(bound)
    return float("inf")


RECALL_LATENCY = LatencyHistogram(
    "memory_recall_duration_seconds", "Latency of Recaller.recall (embed + cache check + rank)."
)

__all__ = ["DEFAULT_BUCKETS", "RECALL_LATENCY", "LatencyHistogram", "quantile_bound"]
