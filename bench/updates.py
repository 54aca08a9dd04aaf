"""Update detection on a bilingual corpus of update / agreement / unrelated pairs.

    python -m bench.updates [--pairs tests/data/update_pairs.jsonl] [--show-errors]

Each pair is an earlier statement and a newer one of the same user, labelled "update" (the
newer changes the value of an attribute the earlier one set, usually with no correction
marker: "I moved to Munich last month" after "I live in Berlin"), "agree" (same value said
again or complemented) or "unrelated". The detector is the write path's conflict policy
(`bench.conflict_detection.detect`, real embedder); a pair counts as an update when it reports
a conflict. Precision and recall are printed per split and language, with the share of
agreeing pairs flagged as conflicts.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bench.conflict_detection import detect, scores
from memory.settings import Settings, apply_privacy_defaults
from memory.storage.embedding import get_embedder

PAIRS = Path("tests/data/update_pairs.jsonl")


def report(pairs: list[dict[str, Any]], found: list[bool]) -> list[str]:
    """One line per split and language: precision, recall, agreeing pairs flagged."""
    lines = []
    for split in dict.fromkeys(p["split"] for p in pairs):
        for lang in ("en", "zh"):
            idx = [i for i, p in enumerate(pairs) if p["split"] == split and p["lang"] == lang]
            labels = [pairs[i]["label"] == "update" for i in idx]
            precision, recall = scores(labels, [found[i] for i in idx])
            agree = [i for i in idx if pairs[i]["label"] == "agree"]
            flagged = sum(found[i] for i in agree) / max(len(agree), 1)
            lines.append(
                f"{split} {lang}: {len(idx)} pairs ({sum(labels)} updates, {len(agree)} agreeing)"
                f"  precision {precision:.3f}  recall {recall:.3f}  agreeing flagged {flagged:.1%}"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    apply_privacy_defaults()
    parser = argparse.ArgumentParser(prog="python -m bench.updates")
    parser.add_argument("--pairs", type=Path, default=PAIRS)
    parser.add_argument("--show-errors", action="store_true")
    args = parser.parse_args(argv)
    lines = args.pairs.read_text(encoding="utf-8").splitlines()
    pairs = [json.loads(line) for line in lines if line.strip()]
    settings = Settings.from_env()
    embedder = get_embedder(settings.embedding_model, settings.embedding_model_dir)
    found = detect(pairs, embedder.embed)
    for line in report(pairs, found):
        print(line)
    if args.show_errors:
        for pair, hit in zip(pairs, found, strict=True):
            if hit != (pair["label"] == "update"):
                print(f"  {pair['label']} flagged={hit} [{pair['split']}] "
                      f"{pair['old']!r} -> {pair['new']!r}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
