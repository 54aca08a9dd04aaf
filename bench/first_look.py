"""What the write path's second look adds to the rules gate on the labelled gate corpora.

    python -m bench.first_look [--corpus tests/data/gate_corpus.jsonl tests/data/gate_meaning]

The rules gate (`memory.gating.gate`) drops short first-person statements whose score is too
low ("I support Arsenal.", "I'm red-green colour-blind."); the write path takes a second look
at them (`memory.gating.ingest.second_look`) and keeps the ones that read, by meaning, as
setting an attribute of the user's. For each user turn of the corpora that the rules gate
drops, this counts the ones the second look would keep without any earlier memory (the update
case needs one), by label: kept and labelled keep (recovered), kept and labelled drop (wrong).
Per split and language (a row without Chinese characters is English). Real embedder
(MEMORY_EMBEDDING_MODEL).
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from bench.gate_meaning import CORPUS, load
from memory.attribute_meaning import sets_attribute
from memory.gating.gate import GatePolicy, gate
from memory.gating.ingest.second_look import states_own_value
from memory.settings import Settings, apply_privacy_defaults
from memory.storage.embedding import get_embedder

CORPORA = (Path("tests/data/gate_corpus.jsonl"), CORPUS)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    apply_privacy_defaults()
    parser = argparse.ArgumentParser(prog="python -m bench.first_look")
    parser.add_argument("--corpus", type=Path, nargs="*", default=list(CORPORA))
    parser.add_argument("--show", action="store_true", help="print every statement it keeps")
    args = parser.parse_args(argv)
    settings = Settings.from_env()
    embed = get_embedder(settings.embedding_model, settings.embedding_model_dir).embed
    tally: Counter[tuple[str, str, str]] = Counter()
    for path in args.corpus:
        for row in load(path):
            if row.get("role", "user") != "user":
                continue
            lang = "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in row["text"]) else "en"
            key = (row["split"], lang)
            decision = gate(row["text"], role="user", policy=GatePolicy())
            tally[(*key, "items")] += 1
            if decision.keep:
                continue
            tally[(*key, "dropped")] += 1
            if states_own_value(decision, "user") and sets_attribute(decision.content, embed):
                outcome = "recovered" if row["keep"] else "wrong"
                tally[(*key, outcome)] += 1
                if args.show:
                    print(f"  {outcome} [{row['split']}] {row['text']!r}")
    for split in sorted({k[0] for k in tally}):
        for lang in ("en", "zh"):
            items, dropped, recovered, wrong = (
                tally[(split, lang, what)] for what in ("items", "dropped", "recovered", "wrong")
            )
            print(f"{split} {lang}: {items} user turns, rules gate drops {dropped}; second look "
                  f"keeps {recovered} labelled keep, {wrong} labelled drop")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
