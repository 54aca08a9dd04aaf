"""Choose `RankingWeights` on the project's development sets by a small coordinate search.

    python -m bench.fit_ranking [--data bench/devsets] [--embed-cache FILE] [--passes 2]
                                [--no-loso]

Every question of every development set is recalled (the in-process `SystemBackend`, raw mode,
`now` = the conversation's last session) and scored by evidence recall@5 and @10 with the
benchmark's own slot rule. The objective is the mean over the sets of R@5 + R@10.

The search walks the weights one at a time over a few round values and moves a weight away
from its current value only when the move is safe on sets this small (six sets, 11-16 questions
each): the mean objective must rise, at least `--min-helped` sets (3) must gain, and no set may
lose more than one question's worth of R@5 or of R@10. Of the admissible values the best wins;
on a tie the value nearer the current one. A weight for which no candidate changes any set's
score is reported as *not informed*: the dev sets cannot tell its values apart, and its value
is left as it was.

Leave-one-set-out: the same search is run with each set held out (the helped-sets rule asks
for all but one of the remaining sets when fewer than four remain) and the chosen values are
compared with the full fit. Never run this on an evaluation set (LoCoMo).
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench._locomo_backends import SystemBackend
from bench._locomo_data import Conversation, load
from bench._locomo_memories import memories_for, scope_for
from bench._locomo_metrics import question_scores
from bench._locomo_vectors import VectorCache
from memory.recall.ranking import RankingWeights
from memory.settings import Settings, apply_privacy_defaults
from memory.storage.embedding import get_embedder

K = 10

# Round candidate values per weight; the current default is always a candidate as well.
GRID: dict[str, tuple[Any, ...]] = {
    "alpha": (0.4, 0.6, 0.8, 1.0, 1.2, 1.6),
    "lexical": (0.5, 0.75, 1.0, 1.25, 1.5, 2.0),
    "speaker": (0.0, 0.2, 0.4, 0.6, 0.8),
    "group": (0.0, 0.2, 0.4, 0.6, 0.8),
    "role": (0.0, 0.2, 0.4, 0.6, 0.8),
    "beta": (0.0, 0.02, 0.05, 0.1, 0.2),
    "gamma": (0.0, 0.05, 0.1),
    "access": (0.0, 0.02, 0.05),
    "access_cap": (0.03, 0.06, 0.1),
    "temporal": (0.0, 0.4, 0.8, 1.2),
    "when": (0.0, 0.2, 0.4, 0.6, 0.8),
    "overfetch": (2, 3, 4, 6, 8),
    "feedback_docs": (0, 5, 10, 20),
    "feedback_terms": (5, 10, 20),
    "feedback_weight": (0.1, 0.2, 0.3, 0.5),
    "feedback_confidence": (0.0, 0.25, 0.5, 0.75, 1.0),
    "weak_leg_guard": (False, True),
    "hop": (0.0, 0.5, 0.8, 1.0, 1.2),
    "hop_seeds": (3, 5, 8),
    "hop_terms": (4, 8, 16),
    "hop_max_share": (0.005, 0.01, 0.02, 0.05),
}

# Per set: (sum over questions of R@5, sum of R@10, questions).
SetScore = tuple[float, float, int]


@dataclass
class DevSets:
    """The dev sets ingested once into one backend; scores memoised per weights."""

    backend: SystemBackend
    sets: dict[str, list[Conversation]]
    _memo: dict[tuple[Any, ...], dict[str, SetScore]]

    @classmethod
    async def from_paths(
        cls, data: list[Path], embed_cache: Path | None
    ) -> tuple[DevSets, VectorCache]:
        """The sets of `data` (files, or folders of `*.json`) and the vector cache they used."""
        files = [f for p in data for f in (sorted(p.glob("*.json")) if p.is_dir() else [p])]
        settings = Settings.from_env()
        vectors = VectorCache(
            get_embedder(settings.embedding_model, settings.embedding_model_dir), embed_cache
        )
        return await cls.open(files, vectors), vectors

    @classmethod
    async def open(cls, files: list[Path], vectors: VectorCache) -> DevSets:
        """Load and ingest every file (one user per conversation, every turn a memory)."""
        backend = SystemBackend(vectors)
        sets = {path.stem: load(path) for path in files}
        for convs in sets.values():
            for conv in convs:
                await backend.ingest(scope_for(conv), memories_for(conv))
        return cls(backend, sets, {})

    async def scores(self, weights: RankingWeights) -> dict[str, SetScore]:
        """Per-set sums of R@5 and R@10 under `weights`."""
        key = (repr(weights),)  # every weight, the searched ones and any other a caller sets
        if key in self._memo:
            return self._memo[key]
        self.backend.weights = weights
        out: dict[str, SetScore] = {}
        for name, convs in self.sets.items():
            r5 = r10 = 0.0
            n = 0
            for conv in convs:
                for q in conv.questions:
                    if not q.evidence:
                        continue
                    hits = await self.backend.recall(
                        scope_for(conv), q.question, K, now=conv.last_date
                    )
                    got = question_scores(hits, q.evidence)
                    r5, r10, n = r5 + got["recall@5"], r10 + got["recall@10"], n + 1
            out[name] = (r5, r10, n)
        self._memo[key] = out
        return out


def objective(scores: dict[str, SetScore], names: list[str]) -> float:
    """Mean over `names` of R@5 + R@10."""
    return sum((scores[s][0] + scores[s][1]) / max(scores[s][2], 1) for s in names) / len(names)


def admissible(
    new: dict[str, SetScore], old: dict[str, SetScore], names: list[str], min_helped: int
) -> bool:
    """Better on average, gains on enough sets, and no set loses more than one question."""
    if objective(new, names) <= objective(old, names) + 1e-9:
        return False
    helped = sum(new[s][0] + new[s][1] > old[s][0] + old[s][1] + 1e-9 for s in names)
    hurt = any(new[s][0] < old[s][0] - 1.0 - 1e-9 or new[s][1] < old[s][1] - 1.0 - 1e-9
               for s in names)  # fmt: skip
    return helped >= min_helped and not hurt


async def search(
    dev: DevSets, start: RankingWeights, names: list[str], min_helped: int, passes: int
) -> tuple[RankingWeights, set[str]]:
    """Coordinate search from `start` over `names`; also the weights the sets inform."""
    current, informed = start, set()
    for _ in range(passes):
        moved = False
        for field, grid in GRID.items():
            here = getattr(current, field)
            base = await dev.scores(current)
            best, best_scores = here, base
            for value in sorted(set(grid) | {here}, key=lambda v: abs(float(v) - float(here))):
                if value == here:
                    continue
                got = await dev.scores(replace(current, **{field: value}))
                if any(got[s] != base[s] for s in names):
                    informed.add(field)
                if (
                    admissible(got, base, names, min_helped)
                    and objective(got, names) > objective(best_scores, names) + 1e-9
                ):
                    best, best_scores = value, got
            if best != here:
                current, moved = replace(current, **{field: best}), True
        if not moved:
            break
    return current, informed


def _table(scores: dict[str, SetScore]) -> str:
    rows = [f"  {name:<10} R@5 {100 * r5 / n:5.1f}  R@10 {100 * r10 / n:5.1f}  ({n} questions)"
            for name, (r5, r10, n) in scores.items()]  # fmt: skip
    return "\n".join(rows)


async def run(args: argparse.Namespace) -> int:
    """Fit on every set, then leave each set out in turn; print the result."""
    dev, vectors = await DevSets.from_paths(args.data, args.embed_cache)
    names = list(dev.sets)
    start = RankingWeights()
    before = await dev.scores(start)
    chosen, informed = await search(dev, start, names, args.min_helped, args.passes)
    after = await dev.scores(chosen)
    vectors.save()
    print(f"current defaults: objective {objective(before, names):.4f}\n{_table(before)}")
    print(f"chosen: objective {objective(after, names):.4f}\n{_table(after)}")
    for field in GRID:
        old, new = getattr(start, field), getattr(chosen, field)
        note = "" if field in informed else "  (not informed: no value changes any set)"
        print(f"  {field:<20} {old!s:>6} -> {new!s:<6}{note}")
    print("what each informed weight's values score at the chosen point "
          "(objective; sets gaining / losing; admissible under the rule):")  # fmt: skip
    for field in (f for f in GRID if f in informed):
        here = getattr(chosen, field)
        cells = []
        for value in sorted(set(GRID[field]) | {here}, key=float):
            got = await dev.scores(replace(chosen, **{field: value}))
            up = sum(got[s][0] + got[s][1] > after[s][0] + after[s][1] + 1e-9 for s in names)
            down = sum(got[s][0] + got[s][1] < after[s][0] + after[s][1] - 1e-9 for s in names)
            ok = "*" if value == here else "+" if admissible(got, after, names, 3) else ""
            cells.append(f"{value!s}: {objective(got, names):.3f} {up}/{down}{ok}")
        print(f"  {field:<20} " + ", ".join(cells))
    if args.no_loso:
        return 0
    agree = 0
    for held in names:
        rest = [s for s in names if s != held]
        fitted, _ = await search(dev, start, rest, min(args.min_helped, len(rest) - 1), args.passes)
        diff = {f: getattr(fitted, f) for f in GRID if getattr(fitted, f) != getattr(chosen, f)}
        agree += not diff
        held_new = (await dev.scores(fitted))[held]
        held_old = before[held]
        print(f"without {held:<10} differs from the full fit in {diff or 'nothing'}; "
              f"{held} R@5+R@10 sums {held_old[0] + held_old[1]:.2f} (defaults) -> "
              f"{held_new[0] + held_new[1]:.2f} (fitted without it)")  # fmt: skip
    print(f"leave-one-set-out: {agree} of {len(names)} fits agree with the full fit")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    apply_privacy_defaults()
    parser = argparse.ArgumentParser(prog="python -m bench.fit_ranking", description=__doc__)
    parser.add_argument("--data", type=Path, nargs="*", default=[Path("bench/devsets")])
    parser.add_argument("--embed-cache", type=Path, default=None,
                        help="an .npz vector cache outside the repository")  # fmt: skip
    parser.add_argument("--passes", type=int, default=2, help="coordinate-search sweeps")
    parser.add_argument("--min-helped", type=int, default=3,
                        help="sets that must gain before a weight moves")  # fmt: skip
    parser.add_argument("--no-loso", action="store_true", help="skip leave-one-set-out")
    return asyncio.run(run(parser.parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main())
