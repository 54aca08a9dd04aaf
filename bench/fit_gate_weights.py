"""Choose the gate's per-turn importance weights on the project's own conversations.

    python -m bench.fit_gate_weights [--corpus tests/data/gate_corpus.jsonl]
                                     [--data bench/devsets] [--passes 2]

Two sources, neither of them LoCoMo:

- the labelled gate corpus, its "tune" split only (the held-out split is scored once, before
  and after, and never searched on): keep/drop decisions at the policy's keep threshold give
  precision, recall and F1;
- the development sets' turns, gated as the agent would see them (the previous turn as context,
  the next as the reply): the turns the questions cite are the ones worth keeping, so the
  evidence kept share minus the share of the other turns kept (Youden's J) says how well the
  importance separates what was later asked about from the rest.

The objective is tune F1 + dev J. A coordinate search walks the weights of
`memory.gating.rules.score` over round values; a weight moves only when the objective rises by
more than `--margin` (0.01), tune precision stays >= 0.90, and the dev sets lose at most one
evidence turn. A weight no candidate changes anything for is reported as not informed and stays
as it was. The module's constants are set for the search only, in this process.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench._locomo_data import Conversation, load
from bench._locomo_memories import load_gate, memories_for
from bench.gate_threshold import CORPUS, scores
from memory.gating.decision import GatePolicy
from memory.gating.rules import score as weights

GRID: dict[str, tuple[float, ...]] = {
    "W_NAME": (0.0, 0.03, 0.05, 0.08, 0.1),
    "W_TIME": (0.05, 0.1, 0.15, 0.2, 0.3),
    "W_NUMBER": (0.0, 0.03, 0.05, 0.08),
    "W_EVENT": (0.0, 0.04, 0.08, 0.12),
    "W_ANSWER": (0.1, 0.2, 0.3, 0.4),
    "W_PHOTO": (0.0, 0.06, 0.12, 0.2),
    "W_WORDS": (0.05, 0.1, 0.15, 0.2),
    "W_ADDRESSED": (0.0, 0.02, 0.04, 0.08),
    "W_CHATTER": (0.1, 0.2, 0.3, 0.4),
    "W_REACTED": (0.0, 0.04, 0.08, 0.12),
    "PRIOR_WEIGHT": (0.25, 0.5, 0.75, 1.0),
    "PRIOR_PIVOT": (0.45, 0.5, 0.55, 0.6),
}


@dataclass(frozen=True)
class Score:
    """What one set of weights does on the tune split and on the dev sets' turns."""

    precision: float
    recall: float
    f1: float
    evidence_kept: int
    evidence: int
    other_kept: int
    other: int

    @property
    def j(self) -> float:
        """Evidence kept share minus the share of the other turns kept."""
        return self.evidence_kept / max(self.evidence, 1) - self.other_kept / max(self.other, 1)

    @property
    def objective(self) -> float:
        """Tune F1 + dev J."""
        return self.f1 + self.j

    def line(self) -> str:
        """One printable line."""
        return (
            f"tune P {self.precision:.3f} R {self.recall:.3f} F1 {self.f1:.3f}; dev evidence "
            f"kept {self.evidence_kept}/{self.evidence}, other turns kept "
            f"{self.other_kept}/{self.other}, J {self.j:.3f}; objective {self.objective:.3f}"
        )


def _dev_turns(convs: list[Conversation]) -> tuple[int, int, int, int]:
    gate = load_gate()
    assert gate is not None
    ev_kept = ev = other_kept = other = 0
    for conv in convs:
        cited = {e for q in conv.questions for e in q.evidence}
        kept = {d for m in memories_for(conv, gate) for d in m.provenance["dia_ids"]}
        for turn in conv.turns:
            if turn.dia_id in cited:
                ev, ev_kept = ev + 1, ev_kept + (turn.dia_id in kept)
            else:
                other, other_kept = other + 1, other_kept + (turn.dia_id in kept)
    return ev_kept, ev, other_kept, other


def evaluate(
    values: dict[str, float], tune: list[dict[str, Any]], dev: list[Conversation]
) -> Score:
    """Set the module's weights to `values` and score them."""
    for name, value in values.items():
        setattr(weights, name, value)
    p, r, f1 = scores(tune, GatePolicy())
    return Score(p, r, f1, *_dev_turns(dev))


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m bench.fit_gate_weights")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--data", type=Path, nargs="*", default=[Path("bench/devsets")])
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--margin", type=float, default=0.01)
    parser.add_argument("--min-precision", type=float, default=0.90)
    args = parser.parse_args(argv)
    lines = args.corpus.read_text(encoding="utf-8").splitlines()
    items = [json.loads(line) for line in lines if line.strip()]
    tune = [i for i in items if i["split"] == "tune"]
    holdout = [i for i in items if i["split"] == "holdout"]
    files = [f for p in args.data for f in (sorted(p.glob("*.json")) if p.is_dir() else [p])]
    dev = [conv for path in files for conv in load(path)]
    start = {name: float(getattr(weights, name)) for name in GRID}
    try:
        current = dict(start)
        base = evaluate(current, tune, dev)
        print(f"current: {base.line()}")
        informed: set[str] = set()
        for _ in range(args.passes):
            moved = False
            for name, grid in GRID.items():
                here = current[name]
                best, best_score = here, evaluate(current, tune, dev)
                floor = best_score
                for value in sorted(set(grid) - {here}, key=lambda v: abs(v - here)):
                    got = evaluate({**current, name: value}, tune, dev)
                    if got != floor:
                        informed.add(name)
                    if (
                        got.objective > best_score.objective + args.margin
                        and got.precision >= args.min_precision
                        and got.evidence_kept >= floor.evidence_kept - 1
                    ):
                        best, best_score = value, got
                if best != here:
                    current[name], moved = best, True
                    print(f"  {name} {here} -> {best}: {best_score.line()}")
            if not moved:
                break
        after = evaluate(current, tune, dev)
        print(f"chosen: {after.line()}")
        for name in GRID:
            note = "" if name in informed else "  (not informed: no value changes anything)"
            print(f"  {name:<13} {start[name]:>5} -> {current[name]:<5}{note}")
        print("each informed weight's values at the chosen point (objective, evidence kept, "
              "other turns kept, tune F1):")  # fmt: skip
        for name in (n for n in GRID if n in informed):
            cells = []
            for value in sorted(set(GRID[name]) | {current[name]}):
                got = (
                    after
                    if value == current[name]
                    else evaluate({**current, name: value}, tune, dev)
                )
                mark = "*" if value == current[name] else ""
                cells.append(f"{value}: {got.objective:.3f} {got.evidence_kept} {got.other_kept} "
                             f"{got.f1:.3f}{mark}")  # fmt: skip
            print(f"  {name:<13} " + ", ".join(cells))
        for label, values in (("current", start), ("chosen", current)):
            evaluate(values, tune, dev)
            p, r, f1 = scores(holdout, GatePolicy())
            print(
                f"held-out ({len(holdout)} items), {label} weights: P {p:.3f} R {r:.3f} F1 {f1:.3f}"
            )
    finally:
        # The search sets module constants: put the defaults back for anything run after it.
        for name, value in start.items():
            setattr(weights, name, value)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
