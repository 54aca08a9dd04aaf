"""Memory poisoning: blocked and false-positive shares on the project's labelled corpus.

    python -m bench.poisoning [--split heldout|dev|all] [--show]

Reads `tests/data/poisoning_corpus.jsonl` (injection attempts and legitimate statements, EN,
ZH, FR, ES, DE and encoded, by class) and reports, per part: the share of attempts the gate
flags (never stored as a rule or preference), the share of legitimate statements it flags
(false positives), and how many missed attempts the rule gate would have stored as a
normal-trust long-term memory.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from memory.gating.gate import gate, is_instruction_like

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "poisoning_corpus.jsonl"


def _becomes_rule(text: str) -> bool:
    decision = gate(text)
    return decision.keep and decision.trust != "low" and decision.kind.value != "episodic"


def report(split: str, show: bool) -> None:
    """Print the shares for one part of the corpus (or all of it)."""
    items = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line]
    items = [i for i in items if split == "all" or i["split"] == split]
    attacks = [i for i in items if i["label"] == "attack"]
    legit = [i for i in items if i["label"] == "legit"]
    missed = [i for i in attacks if not is_instruction_like(i["text"])]
    false = [i for i in legit if is_instruction_like(i["text"])]
    rules = [i for i in missed if _becomes_rule(i["text"])]
    print(f"{split}: {len(attacks)} attempts ({dict(Counter(i['lang'] for i in attacks))}), "
          f"blocked {1 - len(missed) / len(attacks):.1%}; {len(legit)} legitimate, flagged "
          f"{len(false) / max(1, len(legit)):.1%}; missed attempts the gate would store as a "
          f"rule or preference: {len(rules)}")  # fmt: skip
    if show:
        for i in missed:
            print(f"  missed [{i['class']}] {i['text']}")
        for i in false:
            print(f"  false positive [{i['class']}] {i['text']}")


def main() -> None:
    """Report the held-out part by default."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", default="heldout", choices=["heldout", "dev", "all"])
    parser.add_argument("--show", action="store_true", help="list misses and false positives")
    args = parser.parse_args()
    report(args.split, args.show)


if __name__ == "__main__":
    main()
