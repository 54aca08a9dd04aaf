"""Choose the dense leg's trust ramp (`RankingWeights.dense_trust_low/high`) on the dev sets.

    python -m bench.fit_dense_trust [--data bench/devsets ...] [--embed-cache FILE]

The dense leg's weight is scaled per query by how far its best cosine stands out of the
query's cosine with the user's memories (`memory.recall.retrieval_signals.dense_trust`): no
weight at `z` <= low, full weight from `z` >= high. Every (low, high) pair of a small grid is
scored on every development set (evidence recall@5 and @10, the benchmark's slot rule, raw
mode, `now` = the conversation's last session), beside BM25 and dense-only on the same sets.

A pair is chosen by, in order: the fewest (set, k) cells where the system is below BM25 or
dense-only, then the highest mean over sets of R@5 + R@10, then the pair nearest "off".
Leave-one-set-out: the choice is made again on every set but one, and the held-out set's
figures under that choice are printed beside its baselines. Never run it on an evaluation set
(LoCoMo).
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import replace
from pathlib import Path

from bench._locomo_backends import BM25Backend, DenseBackend
from bench._locomo_memories import memories_for, scope_for
from bench._locomo_metrics import question_scores
from bench._locomo_vectors import VectorCache
from bench.fit_ranking import DevSets, K, SetScore
from memory.recall.ranking import RankingWeights
from memory.settings import apply_privacy_defaults

Pair = tuple[float, float]
OFF: Pair = (0.0, 0.0)
GRID: list[Pair] = [OFF] + [
    (low, low + width)
    for low in (0.0, 0.5, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5)
    for width in (0.0, 0.5, 1.0, 1.5, 2.0)
    if low + width > 0.0
]


async def baselines(dev: DevSets, vectors: VectorCache) -> dict[str, dict[str, SetScore]]:
    """Per baseline (bm25, dense), per set: sums of R@5 and R@10 and the question count."""
    out: dict[str, dict[str, SetScore]] = {}
    for backend in (BM25Backend(), DenseBackend(vectors)):
        per: dict[str, SetScore] = {}
        for name, convs in dev.sets.items():
            r5 = r10 = 0.0
            n = 0
            for conv in convs:
                scope = scope_for(conv)
                await backend.ingest(scope, memories_for(conv))
                for q in conv.questions:
                    if not q.evidence:
                        continue
                    hits = await backend.recall(scope, q.question, K, now=conv.last_date)
                    got = question_scores(hits, q.evidence)
                    r5, r10, n = r5 + got["recall@5"], r10 + got["recall@10"], n + 1
            per[name] = (r5, r10, n)
        out[backend.name] = per
    return out


def losses(
    mine: dict[str, SetScore], base: dict[str, dict[str, SetScore]], names: list[str]
) -> int:
    """(set, k) cells where the system is below a baseline."""
    return sum(
        1 for s in names for k in (0, 1) if any(mine[s][k] < b[s][k] - 1e-9 for b in base.values())
    )


def mean_score(mine: dict[str, SetScore], names: list[str]) -> float:
    """Mean over `names` of R@5 + R@10."""
    return sum((mine[s][0] + mine[s][1]) / max(mine[s][2], 1) for s in names) / len(names)


def choose(
    scores: dict[Pair, dict[str, SetScore]],
    base: dict[str, dict[str, SetScore]],
    names: list[str],
) -> Pair:
    """The pair with the fewest losses to a baseline, then the best mean, then the mildest."""
    return min(
        scores,
        key=lambda p: (
            losses(scores[p], base, names),
            -round(mean_score(scores[p], names), 9),
            p[1],
            p[0],
        ),
    )


def _cells(score: SetScore) -> str:
    r5, r10, n = score
    return f"{100 * r5 / n:5.1f}/{100 * r10 / n:5.1f}"


async def run(args: argparse.Namespace) -> int:
    """Score the grid, print the full-data choice and the leave-one-set-out check."""
    dev, vectors = await DevSets.from_paths(args.data, args.embed_cache)
    base = await baselines(dev, vectors)
    names = list(dev.sets)
    scores: dict[Pair, dict[str, SetScore]] = {}
    for low, high in GRID:
        weights = replace(RankingWeights(), dense_trust_low=low, dense_trust_high=high)
        scores[(low, high)] = await dev.scores(weights)
    vectors.save()
    print("set        " + "  ".join(f"{n:>11}" for n in names))
    for name in ("bm25", "dense"):
        print(f"{name:<10} " + "  ".join(f"{_cells(base[name][s]):>11}" for s in names))
    for pair, got in scores.items():
        tag = f"{pair[0]:.2f}-{pair[1]:.2f}"
        print(
            f"{tag:<10} "
            + "  ".join(f"{_cells(got[s]):>11}" for s in names)
            + f"   losses {losses(got, base, names)} mean {50 * mean_score(got, names):.1f}"
        )
    best = choose(scores, base, names)
    print(f"chosen on all {len(names)} sets: low {best[0]}, high {best[1]}")
    for held in names:
        rest = [s for s in names if s != held]
        pick = choose(scores, base, rest)
        got = scores[pick][held]
        below = [b for b in base if any(got[k] < base[b][held][k] - 1e-9 for k in (0, 1))]
        print(
            f"  without {held:<10} -> low {pick[0]}, high {pick[1]}; {held}: {_cells(got)}"
            f" (bm25 {_cells(base['bm25'][held])}, dense {_cells(base['dense'][held])})"
            + (f" below {', '.join(below)}" if below else "")
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    apply_privacy_defaults()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, nargs="*", default=[Path("bench/devsets")])
    parser.add_argument("--embed-cache", type=Path, default=None)
    return asyncio.run(run(parser.parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main())
