"""Charts as inline SVG drawn on the server: no chart library, no script, nothing fetched.

Each chart is an `<svg role="img">` with a `<title>`, and its numbers are text too (the value
beside each bar, a `<title>` per histogram bucket, the latest value in a line chart's legend),
so they can be read without seeing the picture. Colours are classes styled by the inspector's
stylesheet (the CSP forbids inline style).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from agent.inspector.render import e

BREAKDOWN_PARTS = ("similarity", "lexical", "recency", "importance", "access", "temporal")


def breakdown_bars(breakdown: Mapping[str, float], *, label: str) -> str:
    """Horizontal bars, one per ranking signal, each in [0, 1], with its value printed."""
    row_h, bar_w, name_w = 16, 160, 78
    rows = []
    for i, name in enumerate(BREAKDOWN_PARTS):
        value = float(breakdown.get(name, 0.0) or 0.0)
        width = max(0.0, min(1.0, value)) * bar_w
        y = i * row_h
        rows.append(
            f'<text x="0" y="{y + 12}" class="lbl">{e(name)}</text>'
            f'<rect x="{name_w}" y="{y + 3}" width="{bar_w}" height="10" class="track"/>'
            f'<rect x="{name_w}" y="{y + 3}" width="{width:.1f}" height="10" class="bar {e(name)}"'
            f' data-part="{e(name)}" data-value="{value:.3f}"/>'
            f'<text x="{name_w + bar_w + 6}" y="{y + 12}" class="val">{value:.2f}</text>'
        )
    height = row_h * len(BREAKDOWN_PARTS)
    return (
        f'<svg class="breakdown" role="img" width="{name_w + bar_w + 44}" height="{height}"'
        f' viewBox="0 0 {name_w + bar_w + 44} {height}"><title>{e(label)}</title>'
        + "".join(rows)
        + "</svg>"
    )


def histogram(buckets: Sequence[Sequence[float]], *, label: str) -> str:
    """Bars of a cumulative Prometheus histogram, de-accumulated, one per `le` bucket."""
    counts, bounds, previous = [], [], 0.0
    for bound, cumulative in buckets:
        counts.append(cumulative - previous)
        bounds.append(bound)
        previous = cumulative
    if not counts:
        return f'<p class="empty">{e(label)}: no data yet.</p>'
    # Tick labels like "2500" are wider than a bar: slanted, they never run into each other.
    w, h, pad, left = 24, 120, 44, 30
    top = max(counts) or 1
    bars = []
    for i, (n, bound) in enumerate(zip(counts, bounds, strict=True)):
        bh = (n / top) * h
        x = left + i * (w + 4)
        tick = "+Inf" if math.isinf(bound) else f"{bound * 1000:g}"
        tx, ty = x + w / 2 + 4, h + 12
        bars.append(
            f'<rect x="{x}" y="{h - bh:.1f}" width="{w}" height="{bh:.1f}" class="bar hist">'
            f"<title>≤ {e(tick)} ms: {int(n)}</title></rect>"
            f'<text x="{tx}" y="{ty}" transform="rotate(-45 {tx} {ty})" class="tick end">'
            f"{e(tick)}</text>"
        )
    width = left + len(counts) * (w + 4)
    return (
        f'<svg class="chart" role="img" width="{width}" height="{h + pad}"'
        f' viewBox="0 0 {width} {h + pad}"><title>{e(label)}</title>' + "".join(bars) + "</svg>"
    )


def lines(series: Mapping[str, Sequence[tuple[str, float]]], *, label: str) -> str:
    """One polyline per series over shared x labels (dates), with a legend."""
    xs = sorted({x for points in series.values() for x, _ in points})
    if not xs:
        return f'<p class="empty">{e(label)}: no data yet.</p>'
    w, h, left, bottom = 480, 140, 36, 18
    top = max((v for points in series.values() for _, v in points), default=1.0) or 1.0
    step = w / max(1, len(xs) - 1)
    parts = [
        f'<line x1="{left}" y1="{h}" x2="{left + w}" y2="{h}" class="axis"/>',
        f'<text x="0" y="10" class="tick">{top:g}</text>',
        f'<text x="0" y="{h}" class="tick">0</text>',
        f'<text x="{left}" y="{h + bottom - 4}" class="tick">{e(xs[0])}</text>',
        f'<text x="{left + w}" y="{h + bottom - 4}" class="tick end">{e(xs[-1])}</text>',
    ]
    legend = []
    for i, (name, points) in enumerate(sorted(series.items())):
        values = dict(points)
        coords, last = [], 0.0
        for j, x in enumerate(xs):
            last = values.get(x, last)
            coords.append(f"{left + j * step:.1f},{h - (last / top) * (h - 10):.1f}")
        if len(coords) == 1:
            coords.append(coords[0].replace(f"{left:.1f},", f"{left + w:.1f},", 1))
        parts.append(f'<polyline points="{" ".join(coords)}" class="series s{i % 6}"/>')
        legend.append(f'<tspan class="s{i % 6}">■ {e(name)} ({last:g})</tspan> ')
    parts.append(f'<text x="{left}" y="{h + bottom + 14}" class="legend">{"".join(legend)}</text>')
    return (
        f'<svg class="chart" role="img" width="{left + w + 10}" height="{h + bottom + 20}"'
        f' viewBox="0 0 {left + w + 10} {h + bottom + 20}"><title>{e(label)}</title>'
        + "".join(parts)
        + "</svg>"
    )


def rate_bar(value: float | None, *, label: str) -> str:
    """A single 0-100 % bar (hit rates, pollution), or 'no data' when there is none."""
    if value is None:
        return f'<p class="rate"><span class="lbl">{e(label)}</span>: no data yet</p>'
    pct = max(0.0, min(1.0, value)) * 100
    return (
        f'<p class="rate"><span class="lbl">{e(label)}</span> <svg role="img" width="200"'
        f' height="12" viewBox="0 0 200 12"><title>{e(label)}: {pct:.1f}%</title>'
        f'<rect width="200" height="12" class="track"/><rect width="{pct * 2:.1f}" height="12"'
        f' class="bar"/></svg> {pct:.1f}%</p>'
    )


__all__ = ["BREAKDOWN_PARTS", "breakdown_bars", "histogram", "lines", "rate_bar"]
