"""Render `collect_stats` output in the Prometheus text exposition format (version 0.0.4).

Each family has one HELP and one TYPE line before its samples; label values escape backslash,
double quote and newline; histograms have cumulative `_bucket{le=...}` samples ending at "+Inf",
then `_sum` and `_count`. Unknown values (a rate with no data) are left out, not sent as 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

Sample = tuple[str, Mapping[str, str], float]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def format_value(value: float) -> str:
    """A sample value: integers without a point, +Inf/-Inf/NaN spelled as Prometheus does."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if float(value).is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(float(value))


def _family(name: str, kind: str, help_text: str, samples: Iterable[Sample]) -> list[str]:
    # HELP text escapes only backslash and newline; label values also the double quote.
    help_line = help_text.replace("\\", "\\\\").replace("\n", "\\n")
    lines = [f"# HELP {name} {help_line}", f"# TYPE {name} {kind}"]
    for sample_name, labels, value in samples:
        label_text = ",".join(f'{k}="{_escape(str(v))}"' for k, v in labels.items())
        braces = f"{{{label_text}}}" if label_text else ""
        lines.append(f"{sample_name}{braces} {format_value(value)}")
    return lines


def _histogram(name: str, help_text: str, snap: Mapping[str, Any]) -> list[str]:
    samples: list[Sample] = [
        (f"{name}_bucket", {"le": format_value(float(le))}, float(n)) for le, n in snap["buckets"]
    ]
    samples.append((f"{name}_sum", {}, float(snap["sum"])))
    samples.append((f"{name}_count", {}, float(snap["count"])))
    return _family(name, "histogram", help_text, samples)


def _single(name: str, kind: str, help_text: str, value: float | None) -> list[str]:
    """A family of one unlabelled sample; nothing when the value is unknown."""
    if value is None:
        return []
    return _family(name, kind, help_text, [(name, {}, float(value))])


def _storage(stats: Mapping[str, Any]) -> list[str]:
    storage = stats["storage_bytes"]
    name = "memory_storage_bytes"
    samples: list[Sample] = [
        (name, {"store": "postgres", "relation": rel}, float(n))
        for rel, n in storage["postgres"].items()
    ]
    if storage.get("chroma") is not None:
        samples.append((name, {"store": "chroma", "relation": "all"}, float(storage["chroma"])))
    return _family(name, "gauge", "Bytes on disk per store and relation.", samples)


def _rates(stats: Mapping[str, Any]) -> list[str]:
    usage, pollution = stats["usage"], stats["pollution"]
    polluted: list[Sample] = [
        ("memory_polluted_memories", {"reason": why}, float(n))
        for why, n in pollution["by_reason"].items()
    ]
    return [
        *_single("memory_injected_memories", "gauge",
                 "Memories injected into prompts (injection audit events).", usage["injected"]),
        *_single("memory_injected_used_memories", "gauge",
                 "Injected memories the answer used (cited or restated).", usage["used"]),
        *_single("memory_injection_hit_ratio", "gauge",
                 "Share of injected memories the answer used.", usage["hit_rate"]),
        *_single("memory_stored_memories", "gauge",
                 "Memories ever written (audit log).", pollution["stored"]),
        *_family("memory_polluted_memories", "gauge",
                 "Stored memories later superseded, deleted or flagged, by reason.", polluted),
        *_single("memory_pollution_ratio", "gauge",
                 "Share of stored memories later superseded, deleted or flagged.",
                 pollution["rate"]),
    ]  # fmt: skip


def _caches(stats: Mapping[str, Any]) -> list[str]:
    caches = stats["cache"]
    hits: list[Sample] = [
        ("memory_cache_hits_total", {"cache": c}, float(v["hits"])) for c, v in caches.items()
    ]
    misses: list[Sample] = [
        ("memory_cache_misses_total", {"cache": c}, float(v["misses"])) for c, v in caches.items()
    ]
    ratios: list[Sample] = [
        ("memory_cache_hit_ratio", {"cache": c}, float(v["hit_rate"]))
        for c, v in caches.items()
        if v["hit_rate"] is not None
    ]
    return [
        *_family("memory_cache_hits_total", "counter", "In-process cache hits.", hits),
        *_family("memory_cache_misses_total", "counter", "In-process cache misses.", misses),
        *_family("memory_cache_hit_ratio", "gauge", "In-process cache hit rate.", ratios),
    ]


def render_prometheus(stats: Mapping[str, Any]) -> str:
    """The text exposition of a `collect_stats` result."""
    counts: list[Sample] = [
        ("memory_count", {"kind": r["kind"], "status": r["status"]}, float(r["count"]))
        for r in stats["memories"]["by_kind_status"]
    ]
    events: list[Sample] = [
        ("memory_agent_events", {"event_type": t}, float(n))
        for t, n in stats["agent_events"].items()
    ]
    lines = _storage(stats)
    lines += _family("memory_count", "gauge", "Memories by kind and status.", counts)
    lines += _histogram(
        "memory_recall_duration_seconds",
        "Recall latency in this process (embed, cache check, rank).",
        stats["recall_latency_seconds"],
    )
    lines += _caches(stats)
    lines += _rates(stats)
    lines += _family("memory_agent_events", "gauge", "Agent bus events by type.", events)
    images = stats.get("images") or {}
    lines += _single("memory_images", "gauge", "Image memories stored.", images.get("images"))
    lines += _single(
        "memory_image_kept_bytes", "gauge", "Bytes of images kept (thumbnails).",
        images.get("kept_bytes"),
    )  # fmt: skip
    return "\n".join(lines) + "\n"
