"""Does the rule gate read meaning? Keep/drop accuracy on questions, requests and facts.

    python -m bench.gate_meaning [--corpus tests/data/gate_meaning] [--split holdout] [--rules-only]

The corpus holds user turns in English and Chinese: questions and requests with and without a
question mark, greetings and reactions (all to drop), self-introductions, relations, places,
schedules, health, tools and decisions (all to keep), and mixed turns that state a fact and
ask a question, with the fact clause they should keep. Per split and language it prints the
keep/drop accuracy, how many questions or requests were stored, how many self-introductions
were kept, and how many mixed turns kept exactly their fact clause. The "holdout" split is
never used to choose a rule, a weight or a threshold; `tests/unit/test_gate_meaning.py`
asserts its figures. Each item's `batch` says which delivery it came in (1: written with the
first rules; 2-11: written by people who had not read the code, each measured once on arrival
before any rule was chosen on it; docs/benchmarks.md has those first figures). The "blind"
split holds batches whose errors nobody has read yet: the fairest figure of the gate on chat
it never saw. A "reading" batch was blind, has been measured, and is being read: its errors
are not all ruled on yet, so it is neither held out nor a bar the rules clear.
The gate is measured as it ships: the rules with the word model's veto (`--rules-only`: without).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.gating.gate import GatePolicy, gate

# One JSON Lines file per writer's delivery (`batch_NN.jsonl`): a round read into `tune` or
# added `blind` touches its own files only.
CORPUS = Path("tests/data/gate_meaning")
_ASKING = frozenset({"question", "request"})


@dataclass(frozen=True)
class Figures:
    """What the gate does on one slice of the corpus."""

    items: int
    correct: int
    asked: int  # questions and requests
    asked_stored: int
    intros: int
    intros_kept: int
    mixed: int
    mixed_exact: int  # mixed turns kept with exactly their fact clause

    @property
    def accuracy(self) -> float:
        """Share of keep/drop decisions that match the label."""
        return self.correct / max(self.items, 1)

    def line(self) -> str:
        """One printable line."""
        return (
            f"accuracy {self.accuracy:.3f} ({self.correct}/{self.items}); questions/requests "
            f"stored {self.asked_stored}/{self.asked}; self-introductions kept "
            f"{self.intros_kept}/{self.intros}; mixed turns keeping only the fact "
            f"{self.mixed_exact}/{self.mixed}"
        )


def corpus_files(path: Path = CORPUS) -> list[Path]:
    """The JSON Lines files of a corpus given as a folder of them, or as one file."""
    return sorted(path.glob("*.jsonl")) if path.is_dir() else [path]


def load(path: Path = CORPUS) -> list[dict[str, Any]]:
    """The corpus's items, in batch order."""
    lines = [
        line
        for file in corpus_files(path)
        for line in file.read_text(encoding="utf-8").splitlines()
    ]
    return [json.loads(line) for line in lines if line.strip()]


def figures(
    items: list[dict[str, Any]], *, policy: GatePolicy | None = None, show: bool = False
) -> Figures:
    """Gate every item and count; with `show`, print each wrong decision."""
    correct = asked_stored = intros_kept = mixed_exact = 0
    for item in items:
        decision = gate(item["text"], role=item["role"], context=item.get("context"), policy=policy)
        right = decision.keep == item["keep"]
        correct += right
        asked_stored += item["kind"] in _ASKING and decision.keep
        intros_kept += item["kind"] == "intro" and decision.keep
        exact = decision.keep and decision.content == item.get("kept")
        mixed_exact += item["kind"] == "mixed" and exact
        if show and (not right or (item["kind"] == "mixed" and not exact)):
            print(f"  {item['split']}/{item['lang']} {item['kind']}: {item['text']!r} -> "
                  f"keep={decision.keep} {decision.content!r} ({decision.reason})")  # fmt: skip
    return Figures(
        items=len(items),
        correct=correct,
        asked=sum(i["kind"] in _ASKING for i in items),
        asked_stored=asked_stored,
        intros=sum(i["kind"] == "intro" for i in items),
        intros_kept=intros_kept,
        mixed=sum(i["kind"] == "mixed" for i in items),
        mixed_exact=mixed_exact,
    )


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m bench.gate_meaning")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--split", default="all", help="tune, holdout, reading, blind or all")
    parser.add_argument("--batch", type=int, help="only this batch (a writer's delivery)")
    parser.add_argument("--show", action="store_true", help="print every wrong decision")
    parser.add_argument(
        "--rules-only",
        action="store_true",
        help="without the word model's veto (bench.gate_word_model)",
    )
    args = parser.parse_args(argv)
    policy = GatePolicy(word_model_veto=False) if args.rules_only else None
    items = load(args.corpus)
    if args.batch is not None:
        items = [i for i in items if i.get("batch", 1) == args.batch]
    splits = ("tune", "holdout", "reading", "blind") if args.split == "all" else (args.split,)
    for split in splits:
        # Reading a blind batch's errors makes it a tuning batch: only shown when asked by name.
        show = args.show and (split != "blind" or args.split == "blind")
        for lang in ("en", "zh"):
            part = [i for i in items if i["split"] == split and i["lang"] == lang]
            if part:
                print(f"{split} {lang}: {figures(part, policy=policy, show=show).line()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
