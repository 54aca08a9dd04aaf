"""A latency histogram with Prometheus semantics (cumulative `le` buckets, sum, count).

Kept in-process and dependency-free: `prometheus_client` is not a dependency, and one histogram
is a few lines. Each process (server worker, CLI) has its own; a scraper sums them.
"""

from __future__ import annotations

import bisect
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

# Recall targets ~50-100 ms (seed 003): buckets resolve 1 ms to 2.5 s around that.
DEFAULT_BUCKETS: tuple[float, ...] = (
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
)  # fmt: skip


class Histogram:
    """Counts of observations per upper bound, plus their sum and count."""

    def __init__(self, name: str, help_text: str, buckets: Sequence[float] = DEFAULT_BUCKETS):
        bounds = sorted(float(b) for b in buckets)
        if not bounds or bounds != sorted(set(bounds)):
            raise ValueError("buckets must be distinct numbers")
        self.name = name
        self.help = help_text
        self._bounds = bounds
        self._counts = [0] * (len(bounds) + 1)  # the last slot is +Inf
        self._sum = 0.0
        self._lock = threading.Lock()

    def observe(self, seconds: float) -> None:
        """Record one observation."""
        with self._lock:
            self._counts[bisect.bisect_left(self._bounds, seconds)] += 1
            self._sum += seconds

    @contextmanager
    def time(self) -> Iterator[None]:
        """Observe how long the block takes (also when it raises)."""
        started = time.perf_counter()
        try:
            yield
        finally:
            self.observe(time.perf_counter() - started)

    def reset(self) -> None:
        """Forget every observation (tests, or a fresh measurement window)."""
        with self._lock:
            self._counts = [0] * (len(self._bounds) + 1)
            self._sum = 0.0

    def snapshot(self) -> dict[str, Any]:
        """Cumulative buckets `[[le, count], ...]` ending with +Inf, sum, count, and p50/p95."""
        with self._lock:
            counts, total_sum = list(self._counts), self._sum
        cumulative, running = [], 0
        for bound, n in zip([*self._bounds, float("inf")], counts, strict=True):
            running += n
            cumulative.append([bound, running])
        return {
            "buckets": cumulative,
            "sum": total_sum,
            "count": running,
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


RECALL_LATENCY = Histogram(
    "memory_recall_duration_seconds", "Latency of Recaller.recall (embed + cache check + rank)."
)
