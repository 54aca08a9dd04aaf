"""Where the system's fused ranking loses to a single signal, question by question.

    python -m bench.fusion_losses [--data bench/devsets ...] [--embed-cache FILE]
                                  [--collapse-baselines] [--questions]

Every question of every development set is recalled by the system (the in-process
`SystemBackend`, raw mode, `now` = the conversation's last session) and by the two baselines
of `bench.locomo` (BM25 and dense-only over "speaker: content"), and scored by evidence
recall@5 and @10 with the benchmark's own slot rule. The table says, per set, whether the
system is below either baseline at either k; `--questions` lists each question where the
system's worst gold rank is worse than a baseline's and outside the top 5, with the gold turns'
ranks under all three (None: not in the first 50), which is what a diagnosis starts from.

`--collapse-baselines` gives the baselines the system's own rule for copies (memories with
the same words take one place, the other copies follow every distinct result): the
development sets repeat many turns word for word (stock assistant replies, filler), so the
system's lead over the plain baselines is partly that rule, and this shows how much.
Never run it to choose anything on an evaluation set (LoCoMo).
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
from pathlib import Path

from bench._locomo_backends import BM25Backend, DenseBackend, Hit, SystemBackend
from bench._locomo_data import Conversation, load
from bench._locomo_memories import memories_for, scope_for
from bench._locomo_metrics import question_scores
from bench._locomo_vectors import VectorCache
from memory.settings import Settings
from memory.storage.embedding import get_embedder

K = 10
DEPTH = 50


def gold_ranks(hits: Sequence[Hit], gold: Sequence[str]) -> list[int | None]:
    """The slot at which each gold turn is found (slots as in the benchmark), None if absent."""
    used = 0
    found: dict[str, int] = {}
    for hit in hits:
        used += max(1, len(hit.dia_ids))
        for dia in hit.dia_ids:
            if dia in gold and dia not in found:
                found[dia] = used
    return [found.get(g) for g in gold]


def collapse(hits: Sequence[Hit], text_of: dict[str, str]) -> list[Hit]:
    """Copies (same words, case and spacing aside) after every distinct hit, as recall does."""
    seen: set[str] = set()
    first: list[Hit] = []
    repeats: list[Hit] = []
    for hit in hits:
        key = text_of.get(hit.dia_ids[0], hit.dia_ids[0]) if hit.dia_ids else ""
        (repeats if key in seen else first).append(hit)
        seen.add(key)
    return first + repeats


def _worst(ranks: Sequence[int | None]) -> int:
    return max((r if r is not None else DEPTH + 1) for r in ranks)


async def run(args: argparse.Namespace) -> int:
    """Recall every question with the three backends; print the table (and the losses)."""
    files = [f for p in args.data for f in (sorted(p.glob("*.json")) if p.is_dir() else [p])]
    settings = Settings.from_env()
    vectors = VectorCache(
        get_embedder(settings.embedding_model, settings.embedding_model_dir), args.embed_cache
    )
    system, bm25, dense = SystemBackend(vectors), BM25Backend(), DenseBackend(vectors)
    backends = (system, bm25, dense)
    print(f"{'set':<10} {'n':>4}  " + "  ".join(f"{b.name + ' R@5/R@10':>17}" for b in backends))
    for path in files:
        convs: list[Conversation] = load(path)
        sums = {b.name: [0.0, 0.0] for b in backends}
        n = 0
        for conv in convs:
            scope = scope_for(conv)
            for backend in backends:
                await backend.ingest(scope, memories_for(conv))
            text_of = {t.dia_id: f"{t.speaker}\x00{' '.join(t.text.casefold().split())}"
                       for t in conv.turns}  # fmt: skip
            for q in conv.questions:
                if not q.evidence:
                    continue
                n += 1
                gold = list(dict.fromkeys(q.evidence))
                ranks = {}
                for backend in backends:
                    hits = await backend.recall(scope, q.question, DEPTH, now=conv.last_date)
                    if args.collapse_baselines and backend is not system:
                        hits = collapse(hits, text_of)
                    got = question_scores(hits[:K], gold)
                    sums[backend.name][0] += got["recall@5"]
                    sums[backend.name][1] += got["recall@10"]
                    ranks[backend.name] = gold_ranks(hits, gold)
                mine = _worst(ranks["system"])
                best = min(_worst(ranks["bm25"]), _worst(ranks["dense"]))
                if args.questions and mine > max(best, 5):
                    print(f"  {path.stem}: {q.question[:70]!r} system {ranks['system']} "
                          f"bm25 {ranks['bm25']} dense {ranks['dense']}")  # fmt: skip
        cells = [f"{100 * r5 / n:8.1f}/{100 * r10 / n:5.1f}   " for r5, r10 in sums.values()]
        own = sums["system"]
        below = [name for name in ("bm25", "dense")
                 if own[0] < sums[name][0] - 1e-9 or own[1] < sums[name][1] - 1e-9]  # fmt: skip
        note = f"  below {', '.join(below)}" if below else ""
        print(f"{path.stem:<10} {n:>4}  " + "".join(cells) + note)
    vectors.save()
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, nargs="*", default=[Path("bench/devsets")])
    parser.add_argument("--embed-cache", type=Path, default=None)
    parser.add_argument("--collapse-baselines", action="store_true")
    parser.add_argument("--questions", action="store_true")
    return asyncio.run(run(parser.parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main())
