"""Choose the relevance floor on the project's development sets and print the trade-off.

    python -m bench.relevance_floor [--data bench/devsets] [--max-offtopic 0.10]

For every question of every development set, the system's top-10 hits are collected with their
raw cosine and word share; off-topic queries are each conversation's questions asked against
another conversation of the same set, plus greetings and chit-chat. A grid of floors is scored
on two figures: recall@10 counting only hits above the floor (on-topic), and the share of
off-topic queries for which anything passes. The floor with the best above-floor recall whose
off-topic rate is at most --max-offtopic is printed, with the default floor's figures beside it.
Never run this on an evaluation set (LoCoMo): the point is to choose on our own data.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench._locomo_backends import SystemBackend
from bench._locomo_data import Conversation, load
from bench._locomo_memories import memories_for, scope_for
from bench._locomo_offtopic import CHITCHAT
from bench._locomo_vectors import VectorCache
from memory.recall.relevance import RelevanceFloor
from memory.settings import Settings, apply_privacy_defaults
from memory.storage.embedding import get_embedder

K = 10


@dataclass
class Sample:
    """One query's top-k: raw cosine and word share per hit, and which hits are gold."""

    cosine: np.ndarray
    words: np.ndarray
    gold: np.ndarray  # per hit: how many gold turns it covers
    z: np.ndarray  # per hit: standard deviations above the user's mean cosine
    n_gold: int
    has_terms: bool


async def collect(files: list[Path], vectors: VectorCache) -> tuple[list[Sample], list[Sample]]:
    """(on-topic samples, off-topic samples) over every file."""
    from memory.recall.relevance import content_terms

    backend = SystemBackend(vectors)
    on, off = [], []
    for path in files:
        convs: list[Conversation] = load(path)
        for conv in convs:
            await backend.ingest(scope_for(conv), memories_for(conv))
        for i, conv in enumerate(convs):
            other = convs[(i + 1) % len(convs)] if len(convs) > 1 else None
            for q in conv.questions:
                hits = await backend.recall(scope_for(conv), q.question, K, now=conv.last_date)
                on.append(_sample(hits, set(q.evidence), bool(content_terms(q.question))))
                if other is not None:
                    hits = await backend.recall(scope_for(other), q.question, K,
                                                now=other.last_date)  # fmt: skip
                    off.append(_sample(hits, set(), bool(content_terms(q.question))))
            for text in CHITCHAT:
                hits = await backend.recall(scope_for(conv), text, K, now=conv.last_date)
                off.append(_sample(hits, set(), bool(content_terms(text))))
    return on, off


def _sample(hits: list, gold: set[str], has_terms: bool) -> Sample:  # type: ignore[type-arg]
    rel = [h.relevance for h in hits]
    return Sample(
        cosine=np.array([r.cosine if r else 0.0 for r in rel], dtype=np.float32),
        words=np.array([r.words if r else 0.0 for r in rel], dtype=np.float32),
        gold=np.array([len(gold & set(h.dia_ids)) for h in hits], dtype=np.int32),
        z=np.array([r.z if r else 0.0 for r in rel], dtype=np.float32),
        n_gold=max(len(gold), 1),
        has_terms=has_terms,
    )


def _passes(s: Sample, f: RelevanceFloor) -> np.ndarray:
    if not s.has_terms:
        return np.zeros(len(s.cosine), dtype=bool)
    strong = (s.cosine >= f.cosine) | ((s.words >= f.words) & (s.cosine >= f.cosine_with_words))
    strong |= (s.z >= f.outlier) & (s.cosine >= f.cosine_with_words)
    return strong | (s.cosine >= f.companion) if strong.any() else strong


def score(on: list[Sample], off: list[Sample], f: RelevanceFloor) -> tuple[float, float, float]:
    """(recall@10 above floor, recall@10, off-topic injection rate)."""
    above = np.mean([float((s.gold * _passes(s, f)).sum()) / s.n_gold for s in on])
    plain = np.mean([float(s.gold.sum()) / s.n_gold for s in on])
    rate = np.mean([bool(_passes(s, f).any()) for s in off])
    return float(above), float(plain), float(rate)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    apply_privacy_defaults()
    parser = argparse.ArgumentParser(prog="python -m bench.relevance_floor")
    parser.add_argument("--data", type=Path, nargs="*", default=[Path("bench/devsets")])
    parser.add_argument("--max-offtopic", type=float, default=0.10)
    parser.add_argument("--embed-cache", type=Path, default=None)
    args = parser.parse_args(argv)
    files = [f for p in args.data for f in (sorted(p.glob("*.json")) if p.is_dir() else [p])]
    settings = Settings.from_env()
    vectors = VectorCache(
        get_embedder(settings.embedding_model, settings.embedding_model_dir), args.embed_cache
    )
    on, off = asyncio.run(collect(files, vectors))
    vectors.save()
    grid = itertools.product(
        np.arange(0.30, 0.80, 0.025),
        np.arange(0.0, 0.55, 0.05),
        np.arange(0.2, 1.01, 0.1),
        np.arange(-0.1, 0.41, 0.1),
        (2.0, 2.5, 3.0, 3.5, 4.0, 100.0),
    )
    best: tuple[float, float, RelevanceFloor] | None = None
    for c, cw, w, comp, z in grid:
        if cw > c:
            continue
        floor = RelevanceFloor(cosine=round(float(c), 3), cosine_with_words=round(float(cw), 3),
                               words=round(float(w), 2), companion=round(float(comp), 2),
                               outlier=z)  # fmt: skip
        above, _, rate = score(on, off, floor)
        if rate <= args.max_offtopic and (best is None or (above, -rate) > best[:2]):
            best = (above, -rate, floor)
    print(f"{len(on)} on-topic queries, {len(off)} off-topic queries from {len(files)} files")
    for label, floor in (("default", RelevanceFloor()), ("chosen", best[2] if best else None)):
        if floor is None:
            print(f"{label}: no floor meets off-topic <= {args.max_offtopic}")
            continue
        above, plain, rate = score(on, off, floor)
        print(f"{label} {floor}: R@10 above floor {100 * above:.1f} (R@10 {100 * plain:.1f}), "
              f"off-topic injection {rate:.3f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
