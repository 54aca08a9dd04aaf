"""Update detection on a bilingual corpus of update / agreement / unrelated pairs.

    python -m bench.updates [--pairs tests/data/update_pairs.jsonl] [--show-errors]
                            [--model PROVIDER:MODEL]

Each pair is an earlier statement and a newer one of the same user, labelled "update" (the
newer changes the value of an attribute the earlier one set, usually with no correction
marker: "I moved to Munich last month" after "I live in Berlin"), "agree" (same value said
again or complemented) or "unrelated". The detector is the write path's conflict policy
(`bench.conflict_detection.detect`, real embedder); a pair counts as an update when it reports
a conflict. Precision and recall are printed per split and language, with the share of
agreeing pairs flagged as conflicts.

`--model` measures the write path with a gate model as well (`Context.gate_model`, e.g.
`openai:gpt-4o-mini`, or any OpenAI-compatible server through `OPENAI_BASE_URL`): the model
reads each pair (`memory.gating.update_model`) and the policy decides from its reading, with
the rules' verdict where its answer is unusable. Its lines follow the rules' lines.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from bench.conflict_detection import detect, pair_verdict, scores
from memory.gating.conflicts import EmbedFn, resolve_by_reading
from memory.gating.update_model import UpdateReader
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


async def detect_with_model(
    pairs: list[dict[str, Any]], embed: EmbedFn, reader: UpdateReader, *, parallel: int = 4
) -> tuple[list[bool], int]:
    """Whether the write path with `reader` flags each pair, and how many readings failed."""
    gate = asyncio.Semaphore(parallel)
    failed = 0
    done = 0

    async def one(pair: dict[str, Any]) -> bool:
        nonlocal failed, done
        incoming, old, rules = pair_verdict(pair, embed)
        async with gate:
            reading = await reader.read(pair["new"], [pair["old"]])
        done += 1
        if done % 50 == 0:
            print(f"  model read {done}/{len(pairs)} pairs", file=sys.stderr)
        if reading.failed:
            failed += 1
            return rules.conflict
        verdict = resolve_by_reading(incoming, [old], rules, reading.replaces, reading.agrees)
        return verdict.conflict

    found = await asyncio.gather(*(one(pair) for pair in pairs))
    return list(found), failed


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    apply_privacy_defaults()
    parser = argparse.ArgumentParser(prog="python -m bench.updates")
    parser.add_argument("--pairs", type=Path, default=PAIRS)
    parser.add_argument("--show-errors", action="store_true")
    parser.add_argument("--model", help="also measure with this gate model (provider:model)")
    args = parser.parse_args(argv)
    lines = args.pairs.read_text(encoding="utf-8").splitlines()
    pairs = [json.loads(line) for line in lines if line.strip()]
    settings = Settings.from_env()
    embedder = get_embedder(settings.embedding_model, settings.embedding_model_dir)
    found = detect(pairs, embedder.embed)
    runs = [("rules", found)]
    if args.model:
        from agent.model import load_chat_model

        reader = UpdateReader(load_chat_model(args.model))
        by_model, failed = asyncio.run(detect_with_model(pairs, embedder.embed, reader))
        print(f"model {args.model}: {failed} of {len(pairs)} answers unusable (rules used)")
        runs.append((f"model {args.model}", by_model))
    for name, flags in runs:
        print(f"-- {name}")
        for line in report(pairs, flags):
            print(line)
        if args.show_errors:
            for pair, hit in zip(pairs, flags, strict=True):
                if hit != (pair["label"] == "update"):
                    print(f"  {pair['label']} flagged={hit} [{pair['split']}] "
                          f"{pair['old']!r} -> {pair['new']!r}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
