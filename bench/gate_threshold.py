"""Choose the rule gate's keep threshold on the project's own labelled corpus.

    python -m bench.gate_threshold [--corpus tests/data/gate_corpus.jsonl]

Sweeps `GatePolicy.keep_threshold` over the corpus's "tune" split and picks the threshold
with the best F1 among those with precision >= 0.90, the highest on a tie (keeping noise
costs prompt space and pollutes recall; missing a fact loses it); the held-out split is scored
at that point only, and so is the held-out split of tests/data/gate_meaning/ (questions,
requests, names and mixed turns, per language; see `bench.gate_meaning`).
LoCoMo is never used here: `python -m bench.locomo --mode gated` reports what the chosen point
stores and keeps there.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from bench.gate_meaning import figures
from bench.gate_meaning import load as load_meaning
from memory.gating.gate import GatePolicy, gate

CORPUS = Path("tests/data/gate_corpus.jsonl")


def scores(items: list[dict[str, Any]], policy: GatePolicy) -> tuple[float, float, float]:
    """(precision, recall, F1) of the keep decision on `items`."""
    tp = fp = fn = 0
    for item in items:
        kept = gate(item["text"], role=item["role"], context=item.get("context"), policy=policy)
        tp += kept.keep and item["keep"]
        fp += kept.keep and not item["keep"]
        fn += (not kept.keep) and item["keep"]
    precision, recall = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
    return precision, recall, 2 * precision * recall / max(precision + recall, 1e-9)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m bench.gate_threshold")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--min-precision", type=float, default=0.90)
    args = parser.parse_args(argv)
    lines = args.corpus.read_text(encoding="utf-8").splitlines()
    items = [json.loads(line) for line in lines if line.strip()]
    tune = [i for i in items if i["split"] == "tune"]
    holdout = [i for i in items if i["split"] == "holdout"]
    best: tuple[float, float] | None = None
    for threshold in np.arange(0.60, 0.801, 0.005):
        t = round(float(threshold), 3)
        p, r, f1 = scores(tune, GatePolicy(keep_threshold=t))
        print(f"keep_threshold {t:.3f}: tune precision {p:.3f} recall {r:.3f} F1 {f1:.3f}")
        # Ties go to the higher threshold: of equally good points, store less.
        if p >= args.min_precision and (best is None or f1 >= best[1]):
            best = (t, f1)
    if best is None:
        print(f"no threshold reaches precision {args.min_precision} on the tune split")
        return 1
    p, r, f1 = scores(holdout, GatePolicy(keep_threshold=best[0]))
    print(f"chosen {best[0]:.3f} (tune F1 {best[1]:.3f}); held-out precision {p:.3f} "
          f"recall {r:.3f} F1 {f1:.3f} ({len(holdout)} items)")  # fmt: skip
    # The assistant-conversation items (coding help, planning, personal assistance) on their
    # own: the kind of chat the agent serves, and the part most unlike the older items.
    chat = [i for i in holdout if i.get("source") == "assistant-chat"]
    if chat:
        p, r, f1 = scores(chat, GatePolicy(keep_threshold=best[0]))
        print(f"  of which assistant-chat: precision {p:.3f} recall {r:.3f} F1 {f1:.3f} "
              f"({len(chat)} items)")  # fmt: skip
    current = GatePolicy().keep_threshold
    p, r, f1 = scores(holdout, GatePolicy())
    print(f"default {current:.3f}: held-out precision {p:.3f} recall {r:.3f} F1 {f1:.3f}")
    # Questions, requests, names and mixed turns (bench.gate_meaning), held out as well.
    meaning = [i for i in load_meaning() if i["split"] == "holdout"]
    for lang in ("en", "zh"):
        part = [i for i in meaning if i["lang"] == lang]
        chosen = figures(part, policy=GatePolicy(keep_threshold=best[0]))
        print(f"  meaning held-out {lang} at {best[0]:.3f}: {chosen.line()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
