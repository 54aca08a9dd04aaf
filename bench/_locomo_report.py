"""Printing the LoCoMo results as a table."""

from __future__ import annotations

from typing import Any

NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
METRICS = ("recall@1", "recall@5", "recall@10", "mrr")


def _row(label: str, values: dict[str, float], count: int | None = None) -> str:
    cells = "".join(f"{100 * values[m]:8.1f}" for m in METRICS[:3]) + f"{values['mrr']:8.3f}"
    return f"  {label:<24}{cells}" + (f"   n={count}" if count is not None else "")


def _tables(result: dict[str, Any]) -> list[str]:
    lines = [f"  {'':<24}{'R@1':>8}{'R@5':>8}{'R@10':>8}{'MRR':>8}"]
    for backend in ("system", "bm25", "dense"):
        block = result[backend]
        lines.append(f"{backend}")
        lines.append(_row("categories 1-4", block["cat_1_4"]))
        for cat, values in block["by_category"].items():
            name = NAMES.get(int(cat), "other")
            lines.append(_row(f"{cat} {name}", values, block["questions"].get(cat)))
    lines.extend(_comparison(result))
    main = result["system"]["cat_1_4"]
    lines.append(
        f"system: R@10 above the relevance floor {100 * main['recall@10_above_floor']:.1f} "
        f"(R@10 {100 * main['recall@10']:.1f}); session-level recall@5 "
        f"{100 * main['session_recall@5']:.1f}, @10 {100 * main['session_recall@10']:.1f}; "
        f"off-topic injection rate {result['system']['offtopic_injection_rate']:.3f} "
        f"(foreign questions {result['system']['offtopic_questions_rate']:.3f}, chit-chat "
        f"{result['system']['chitchat_injection_rate']:.3f})"
    )
    for base in ("bm25", "dense"):
        ratios = result["ratios"][f"system_over_{base}"]
        lines.append(
            f"system / {base} (cat 1-4): " + ", ".join(f"{m} x{ratios[m]:.2f}" for m in METRICS)
        )
    return lines


def _cell(result: dict[str, Any], cat: str | None, metric: str) -> str:
    values = []
    for backend in ("system", "bm25", "dense"):
        block = result[backend]
        figures = block["cat_1_4"] if cat is None else block["by_category"].get(cat)
        value = figures[metric] if figures else 0.0
        values.append(f"{value:.3f}" if metric == "mrr" else f"{100 * value:.1f}")
    # A star marks a cell where the system is below a baseline, so losses stand out.
    behind = any(float(v) > float(values[0]) for v in values[1:])
    return ("/".join(values) + ("*" if behind else " ")).rjust(19)


def _comparison(result: dict[str, Any]) -> list[str]:
    """System / BM25 / dense side by side per category; * marks the system below either."""
    lines = [
        "system/bm25/dense" + "".join(f"{m.upper() if m == 'mrr' else m:>19}" for m in METRICS)
    ]
    rows: list[tuple[str, str | None]] = [("categories 1-4", None)]
    rows += [(f"{c} {NAMES.get(int(c), 'other')}", c) for c in result["system"]["by_category"]]
    for label, cat in rows:
        lines.append(f"  {label:<15}" + "".join(_cell(result, cat, m) for m in METRICS))
    return lines


def render(result: dict[str, Any]) -> str:
    """A human-readable table of every backend, the ratios and the costs."""
    lines = [
        f"LoCoMo evidence recall: {result['conversations']} conversations, "
        f"{result['turns']} turns, mode {result['mode']}",
        *_tables(result),
    ]
    for name, block in result.get("dev_sets", {}).items():
        lines.append(
            f"dev set {name}: {block['conversations']} conversations, {block['turns']} turns"
        )
        lines.extend(_tables(block))
        if "cross_set_offtopic" in block:
            cross = block["cross_set_offtopic"]
            lines.append(
                f"system: {name} questions against the other {len(cross['against'])} sets' "
                "memories inject "
                f"something for {cross['injection_rate']:.3f} of {cross['queries']} queries "
                "(cross-set off-topic)"
            )
    lat, search = result["latency_ms"], result["search_latency_ms"]
    lines.append(
        f"ingest {result['ingest_per_s']:.0f} memories/s (embedding included); recall latency "
        f"p50 {lat['p50']:.2f} ms, p95 {lat['p95']:.2f} ms (query embedding included); "
        f"search call alone p50 {search['p50']:.3f} ms, p95 {search['p95']:.3f} ms"
    )
    lines.append(
        f"stored share {result['stored_share']:.3f}, "
        f"evidence kept share {result['evidence_kept_share']:.3f} of distinct turns, "
        f"{result.get('evidence_refs_kept_share', 1.0):.3f} of question references"
    )
    for point in result.get("gate_curve", []):
        lines.append(
            f"  keep threshold {point['keep_threshold']:.3f}: stored {point['stored_share']:.4f}, "
            f"evidence kept {point['evidence_kept_share']:.4f} of distinct turns, "
            f"{point['evidence_refs_kept_share']:.4f} of references"
        )
    if "import" in result:
        imp = result["import"]
        lines.append(
            f"import {imp['memories_per_s']:.0f} memories/s (memory-agent import --raw, "
            f"{imp['memories']} memories in {imp['seconds']:.1f} s, batches of "
            f"{imp['batch_size']}); gated {imp['gated']['memories_per_s']:.0f} memories/s "
            f"({imp['gated']['messages_per_s']:.0f} messages/s); same-run baseline one memory "
            f"at a time {imp['baseline_one_at_a_time_per_s']:.0f} memories/s; per CPU second "
            f"{imp['raw']['memories_per_cpu_s']:.0f} raw vs "
            f"{imp['baseline_one_at_a_time_per_cpu_s']:.0f} one at a time; load average "
            f"{imp['load_1m_before']:.1f} -> {imp['load_1m_after']:.1f} on {imp['cpus']} CPUs"
        )
    return "\n".join(lines)
