"""Precision and recall of the conflict detector on labelled updates and compatible pairs.

    python -m bench.conflict_detection [--pairs tests/data/conflict_pairs.jsonl]

Each pair is an existing memory and a newer statement of the same user, labelled "update"
(the new one replaces the old: "I like tea" after "I like coffee") or not (both can hold:
"I have a cat" / "I have two cats", or unrelated). The detector (`memory.gating.conflicts.
resolve` with the real embedder) counts a pair as an update when it reports a conflict.
Figures are printed for the "tune" split (where choices are made) and the held-out split.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from memory.gating.conflicts import Candidate, Existing, Resolution, resolve
from memory.settings import Settings, apply_privacy_defaults
from memory.storage.embedding import get_embedder
from memory.types import Category, Origin

PAIRS = Path("tests/data/conflict_pairs.jsonl")


def pair_verdict(pair: dict[str, Any], embed: Any) -> tuple[Candidate, Existing, Resolution]:
    """The pair as the write path sees it (newer statement, older memory), and its verdict."""
    vectors = embed([pair["old"], pair["new"]])
    similarity = float(np.dot(vectors[0], vectors[1]))
    category = Category(pair["category"])
    incoming = Candidate(pair["new"], category)
    earlier = incoming.created_at.replace(year=2020)
    old = Existing("old", pair["old"], similarity, Origin.EXPLICIT, category, earlier)
    return incoming, old, resolve(incoming, [old], embed=embed)


def detect(pairs: list[dict[str, Any]], embed: Any) -> list[bool]:
    """Whether the detector flags each pair as a conflict."""
    return [pair_verdict(pair, embed)[2].conflict for pair in pairs]


def scores(labels: list[bool], found: list[bool]) -> tuple[float, float]:
    """(precision, recall)."""
    tp = sum(a and b for a, b in zip(labels, found, strict=True))
    fp = sum(b and not a for a, b in zip(labels, found, strict=True))
    fn = sum(a and not b for a, b in zip(labels, found, strict=True))
    return tp / max(tp + fp, 1), tp / max(tp + fn, 1)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    apply_privacy_defaults()
    parser = argparse.ArgumentParser(prog="python -m bench.conflict_detection")
    parser.add_argument("--pairs", type=Path, default=PAIRS)
    parser.add_argument("--show-errors", action="store_true")
    args = parser.parse_args(argv)
    lines = args.pairs.read_text(encoding="utf-8").splitlines()
    pairs = [json.loads(line) for line in lines if line.strip()]
    settings = Settings.from_env()
    embedder = get_embedder(settings.embedding_model, settings.embedding_model_dir)
    found = detect(pairs, embedder.embed)
    for split in ("tune", "holdout"):
        idx = [i for i, p in enumerate(pairs) if p["split"] == split]
        p, r = scores([pairs[i]["update"] for i in idx], [found[i] for i in idx])
        print(f"{split}: {len(idx)} pairs, precision {p:.3f}, recall {r:.3f}")
    if args.show_errors:
        for pair, hit in zip(pairs, found, strict=True):
            if hit != pair["update"]:
                print(f"  {'missed' if pair['update'] else 'false alarm'} [{pair['split']}] "
                      f"{pair['old']!r} -> {pair['new']!r}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
