"""`memory-agent stats`: storage size, memory counts, latency, cache, hit and pollution rates.

Sizes, counts and rates come from the database (every process's work); latency and cache
counters are this process's own, so after a fresh CLI start they are empty: the long-running
server's figures are on its `/metrics` route.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from agent.commands.output import print_json, say

if TYPE_CHECKING:
    from memory.storage.calibration import CosineScale


def register(subparsers: Any) -> None:
    """Add `stats` to the CLI's subparsers."""
    p = subparsers.add_parser("stats", help="memory metrics: size, counts, hit and pollution rate")
    p.add_argument("--tenant", default=None, help="only this tenant's counts (default: all)")
    p.add_argument("--json", action="store_true", help="print the metrics as JSON")
    p.set_defaults(handler=stats)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _mb(value: float | None) -> str:
    return "n/a" if value is None else f"{value / 1_048_576:.2f} MB"


def _lines(s: dict[str, Any]) -> list[str]:
    storage, memories, usage = s["storage_bytes"], s["memories"], s["usage"]
    pollution, latency = s["pollution"], s["recall_latency_seconds"]
    kinds = ", ".join(f"{k} {n}" for k, n in memories["by_kind"].items()) or "none"
    statuses = ", ".join(f"{k} {n}" for k, n in memories["by_status"].items()) or "none"
    caches = "; ".join(
        f"{name} {_pct(c['hit_rate'])} ({c['hits']} hits, {c['misses']} misses)"
        for name, c in s["cache"].items()
    )
    return [
        f"scope:           {s['tenant'] or 'all tenants'}",
        f"storage:         postgres {_mb(storage['postgres_total'])}, "
        f"chroma {_mb(storage['chroma'])}",
        f"memories:        {memories['total']} ({kinds}; {statuses})",
        f"hit rate:        {_pct(usage['hit_rate'])} of {usage['injected']} injected memories "
        f"used, over {usage['turns']} turns",
        f"pollution rate:  {_pct(pollution['rate'])} of {pollution['stored']} stored memories "
        f"({', '.join(f'{k} {n}' for k, n in pollution['by_reason'].items())})",
        f"recall latency:  {latency['count']} recalls in this process"
        + (
            f", p50 <= {latency['p50_le']}s, p95 <= {latency['p95_le']}s"
            if latency["count"]
            else ""
        ),
        f"cache:           {caches}",
        f"agent events:    {sum(s['agent_events'].values())}",
        *([_calibration_line(s["calibration"])] if "calibration" in s else []),
    ]


def _calibration_line(c: dict[str, Any]) -> str:
    poorly = c.get("reads_poorly") or []
    # A language the model barely separates is judged by its words for new users, and ranks
    # poorly for everyone: say so, and what to run instead.
    note = (
        f"; reads {', '.join(poorly)} poorly: a multilingual model reads it better"
        " (MEMORY_EMBEDDING_MODEL=local:multilingual-e5-small)"
        if poorly
        else ""
    )
    if c["identity"]:
        return (
            f"cosine scale:    {c['model']} is the reference (set v{c['version']}; identity{note})"
        )
    anchors = ", ".join(f"{k} {v}" for k, v in c["anchors"].items())
    separation = ", ".join(f"{k} {v}" for k, v in c["separation"].items())
    return (
        f"cosine scale:    {c['model']} mapped to the reference (set v{c['version']};"
        f" raw {anchors}; separation {separation}; measured {c['measured_at']}{note})"
    )


def calibration_summary(scale: CosineScale) -> dict[str, Any]:
    """Which cosine calibration is in force: model, reference version, anchors, when measured."""
    return {
        "model": scale.model,
        "version": scale.version,
        "identity": scale.identity,
        "anchors": scale.anchors(),
        "separation": scale.separation,
        "reads_poorly": [lang for lang in sorted(scale.background) if scale.reads_poorly(lang)],
        "measured_at": scale.measured_at.isoformat(timespec="seconds"),
    }


async def stats(args: argparse.Namespace) -> int:
    """Print the metrics (text or JSON)."""
    # Imported here: the CLI imports this module to build its parser, for every command.
    from memory.observability.metrics import chroma_dir_for, collect_stats
    from memory.settings import Settings
    from memory.storage.store import open_store
    from memory.types import Scope

    if args.tenant is not None:
        Scope(args.tenant, "stats")  # the same id rules as everywhere; raises ScopeError
    settings = Settings.from_env()
    async with open_store(settings, reindex_on_start=False) as store:
        result = await collect_stats(store, tenant=args.tenant, chroma_dir=chroma_dir_for(settings))
        result["calibration"] = calibration_summary(store.scale)
    if args.json:
        print_json(result)
    else:
        say("\n".join(_lines(result)))
    return 0


__all__ = ["register", "stats"]
