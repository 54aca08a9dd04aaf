"""Fit the relevance floor's query-level model on development data.

    python -m bench.relevance_floor [--data bench/devsets] [--real FILE ...]
                                    [--max-offtopic 0.10]
                                    [--history bench/devsets/long/long.json] [--fit-history]
                                    [--embed-cache FILE] [--cross-validate]

For every question of every development set, the system's top-10 hits and the query's
`QueryEvidence` against the user's memories are collected. On-topic queries are each question
asked of its own conversation. Off-topic queries are each question asked of the next
conversation of its own set (`bench.locomo`'s off-topic pair), every set's questions asked of
one conversation of every other set (asked only of the next set's, a set's rate would rest on
whichever set sorts after it), and greetings and chit-chat against every conversation.
`--real` files (real chats such as LongMemEval-S dev, each conversation its own user) are sets
of their own: their questions are asked of their own and the next conversation only. Within a
generated set the conversations share a domain and filler replies, so some next-conversation
injections there are right; the real chats' haystacks share almost no text. General-knowledge
questions (`GENERAL_QUESTIONS`) are asked of every conversation too and reported only: the one
off-topic kind where every injection is wrong.

A logistic model (each set weighs the same, classes balanced within a set, L2 0.01, plain
gradient descent: deterministic) is fitted on the features, then the threshold with the best
recall@10 above the floor is chosen among those that keep, averaged over the sets,
`bench.locomo`'s off-topic rate and the foreign-question rate, and every set's chit-chat rate,
at or below --max-offtopic. The weights and threshold printed are the `RelevanceFloor`
defaults. Never run this on an evaluation set (LoCoMo): the point is to choose on our own
data. With --cross-validate each set is also scored by a model and threshold fitted on the
other sets only (the figure to expect on conversations the floor was not chosen on).

The long history (`--history`, one user holding every English set's conversations: 900
memories) is reported as a row of its own: its questions on topic, and world questions
(`HISTORY_NEGATIVES`) as its off-topic kind. It is left out of the fit unless `--fit-history`
(see docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import asyncio
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from bench._locomo_backends import SystemBackend
from bench._locomo_data import Conversation, load
from bench._locomo_memories import memories_for, scope_for
from bench._locomo_offtopic import CHITCHAT
from bench._locomo_vectors import VectorCache
from memory.recall.ranking import RankingWeights
from memory.recall.relevance import QueryEvidence, RelevanceFloor, content_terms
from memory.settings import Settings, apply_privacy_defaults
from memory.storage.embedding import get_embedder

K = 10
# Questions about the world, not about the user: no memory of anyone's life answers them, so
# unlike another set's questions (the sets share everyday topics: a wedding, an injury, a trip)
# every injection here is a false one. Reported, not fitted on or constrained, so the floor's
# choice stays as described; written for this check, about nothing the dev sets discuss.
GENERAL_QUESTIONS = (
    "What is the capital of Australia?",
    "Who wrote Pride and Prejudice?",
    "How many bones are in the adult human body?",
    "What is the boiling point of water at sea level in Fahrenheit?",
    "When did the Berlin Wall fall?",
    "What is the chemical symbol for gold?",
    "How far is the Moon from the Earth?",
    "Who painted the ceiling of the Sistine Chapel?",
    "What is the square root of 144?",
    "Which planet has the most moons?",
    "What language is spoken in Brazil?",
    "How does photosynthesis work?",
    "What is the longest river in Africa?",
    "Who discovered penicillin?",
    "What does DNA stand for?",
    "How many players are on a volleyball team?",
    "澳大利亚的首都是哪里？",
    "《红楼梦》的作者是谁？",
    "光速是多少？",
    "长城有多长？",
    "水的化学式是什么？",
    "月球离地球有多远？",
)
# Questions about the world asked of the long history (`--history`), the one user there with
# hundreds of memories. Its conversations are every English set's, so no other set's question
# is foreign to it; these are its off-topic queries (reported, and fitted on with
# --fit-history). Disjoint from GENERAL_QUESTIONS, which stay a report.
HISTORY_NEGATIVES = (
    "What is the tallest mountain in South America?",
    "Who composed the Four Seasons?",
    "How many hearts does an octopus have?",
    "What year did the Titanic sink?",
    "What is the largest desert in the world?",
    "Who invented the telephone?",
    "What is the freezing point of mercury?",
    "Which country has the most time zones?",
    "What is the currency of Switzerland?",
    "How many moons does Mars have?",
    "Who was the first person to walk on the Moon?",
    "What gas do plants release at night?",
    "What is the smallest prime number greater than fifty?",
    "Which ocean is the deepest?",
    "Who wrote the Odyssey?",
    "What is the speed of sound in air?",
    "What is the national animal of Scotland?",
    "What is the capital of Mongolia?",
    "Which element has atomic number 26?",
    "When was the printing press invented?",
    "What causes the northern lights?",
    "How tall is the Eiffel Tower?",
    "Which animal is the fastest on land?",
    "What is the main ingredient of hummus?",
)


@dataclass
class Sample:
    """One query against one user: its evidence, its hits' cosines, and which hits are gold."""

    dataset: str
    evidence: QueryEvidence
    cosines: np.ndarray
    gold: np.ndarray  # per hit: how many gold turns it covers
    n_gold: int
    has_terms: bool
    on_topic: bool
    chitchat: bool = False
    general: bool = False
    within: bool = False  # off-topic: asked of the next conversation of its own set
    fitted: bool = True  # False: reported only (the long history, unless --fit-history)


async def _ask(
    backend: SystemBackend, conv: Conversation, query: str, gold: set[str], dataset: str
) -> Sample:
    scope = scope_for(conv)
    index = backend.index(scope)
    vector = backend.vectors.embed([query])[0]
    found = index.search(query, vector, k=K, now=conv.last_date, weights=backend.weights)
    ids = [memory_id for memory_id, _ in found]
    evidence, cosines, _ = index.query_evidence(query, vector, ids, backend.weights)
    return Sample(
        dataset=dataset,
        evidence=evidence,
        cosines=np.array(cosines, dtype=np.float32),
        gold=np.array([len(gold & set(backend.turns(scope, i))) for i in ids], dtype=np.int32),
        n_gold=max(len(gold), 1),
        has_terms=bool(content_terms(query)),
        on_topic=bool(gold),
    )


async def _quiet(backend: SystemBackend, conv: Conversation, name: str) -> list[Sample]:
    """Chit-chat and general-knowledge questions asked of one conversation."""
    out = []
    for text in CHITCHAT:
        chat = await _ask(backend, conv, text, set(), name)
        chat.chitchat = True
        out.append(chat)
    for text in GENERAL_QUESTIONS:
        general = await _ask(backend, conv, text, set(), name)
        general.general = True
        out.append(general)
    return out


async def _history(backend: SystemBackend, path: Path) -> list[Sample]:
    """The long history's own questions, and world questions and chit-chat asked of it."""
    out: list[Sample] = []
    name = path.stem
    for conv in load(path):
        await backend.ingest(scope_for(conv), memories_for(conv))
        for q in conv.questions:
            if q.evidence:
                out.append(await _ask(backend, conv, q.question, set(q.evidence), name))
        for text in HISTORY_NEGATIVES:
            out.append(await _ask(backend, conv, text, set(), name))
        out.extend(await _quiet(backend, conv, name))
    return out


async def _within(
    backend: SystemBackend, convs: list[Conversation], i: int, name: str
) -> list[Sample]:
    """Conversation `i`'s questions asked of its own user (on topic) and of the next one.

    The next conversation of the same set is `bench.locomo`'s off-topic pair, so the floor is
    chosen on the rate that benchmark reports.
    """
    conv, out = convs[i], []
    for q in conv.questions:
        if not q.evidence:
            continue
        out.append(await _ask(backend, conv, q.question, set(q.evidence), name))
        if len(convs) > 1:
            other = await _ask(backend, convs[(i + 1) % len(convs)], q.question, set(), name)
            other.within = True
            out.append(other)
    return out


async def collect(
    files: list[Path],
    vectors: VectorCache,
    history: Path | None = None,
    fit_history: bool = False,
    real: Sequence[Path] = (),
) -> list[Sample]:
    """Every on-topic and off-topic sample over the files (see the module docstring)."""
    backend = SystemBackend(vectors)
    sets = {path.stem: load(path) for path in files}
    chats = {path.stem: load(path) for path in real}
    for convs in (*sets.values(), *chats.values()):
        for conv in convs:
            await backend.ingest(scope_for(conv), memories_for(conv))
    out: list[Sample] = []
    for name, convs in chats.items():
        for i, conv in enumerate(convs):
            out.extend(await _within(backend, convs, i, name))
            out.extend(await _quiet(backend, conv, name))
    names = list(sets)
    for name in names:
        convs = sets[name]
        for i, conv in enumerate(convs):
            out.extend(await _within(backend, convs, i, name))
            for q in conv.questions:
                if not q.evidence:
                    continue
                for foreign in (sets[other] for other in names if other != name):
                    other_conv = foreign[i % len(foreign)]
                    out.append(await _ask(backend, other_conv, q.question, set(), name))
            out.extend(await _quiet(backend, conv, name))
    if history is not None:
        extra = await _history(backend, history)
        for sample in extra:
            sample.fitted = fit_history
        out.extend(extra)
    return out


def fit(samples: list[Sample], l2: float = 0.01, steps: int = 3000) -> tuple[float, ...]:
    """Logistic regression on the questions that have content terms; deterministic.

    Every set weighs the same, and within a set its on-topic and off-topic questions weigh the
    same: forty long real chats and eight small generated sets each get one vote, so neither
    kind of history sets the model alone. Chit-chat and general questions are not fitted on.
    """
    rows = [s for s in samples if s.has_terms and s.fitted and not (s.general or s.chitchat)]
    x = np.array([(1.0, *s.evidence.features()) for s in rows], dtype=np.float64)
    y = np.array([float(s.on_topic) for s in rows], dtype=np.float64)
    groups = [(s.dataset, s.on_topic) for s in rows]
    counts: dict[tuple[str, bool], int] = defaultdict(int)
    for group in groups:
        counts[group] += 1
    sample_weight = np.array([1.0 / counts[g] for g in groups])
    total = float(sample_weight.sum())
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        grad = x.T @ ((p - y) * sample_weight) / total + l2 * np.r_[0.0, w[1:]]
        w -= grad
    return tuple(round(float(v), 2) for v in w)


def _passes(s: Sample, floor: RelevanceFloor) -> np.ndarray:
    if not s.has_terms:
        return np.zeros(len(s.cosines), dtype=bool)
    strong = s.cosines >= floor.cosine
    if strong.any() or s.evidence.score(floor) >= floor.threshold:
        return strong | (s.cosines >= floor.companion)
    return strong


Row = tuple[float, float, float, float, float, float, float]


def _rate(rows: list[Sample], floor: RelevanceFloor) -> float:
    """Share of the queries that inject anything (NaN for none)."""
    if not rows:
        return math.nan
    return float(np.mean([bool(_passes(s, floor).any()) for s in rows]))


def table(samples: list[Sample], floor: RelevanceFloor) -> dict[str, Row]:
    """Per set: above-floor R@10, R@10, and injection rates.

    The rates are: foreign questions (another set's), chit-chat, general-knowledge questions,
    the next conversation's questions of the same set, and `bench.locomo`'s off-topic rate
    (the next conversation's questions and chit-chat pooled). They are kept apart: a set has
    more chit-chat queries than questions, and pooled they would hide a floor that lets
    questions in.
    """
    by: dict[str, list[Sample]] = defaultdict(list)
    for s in samples:
        by[s.dataset].append(s)
    out = {}
    for name, rows in by.items():
        on = [s for s in rows if s.on_topic]
        within = [s for s in rows if s.within]
        foreign = [s for s in rows if not (s.on_topic or s.chitchat or s.general or s.within)]
        chat = [s for s in rows if s.chitchat]
        general = [s for s in rows if s.general]
        above = np.mean([float((s.gold * _passes(s, floor)).sum()) / s.n_gold for s in on])
        plain = np.mean([float(s.gold.sum()) / s.n_gold for s in on])
        pooled = _rate(within + chat, floor) if within else math.nan
        out[name] = (
            float(above),
            float(plain),
            _rate(foreign, floor),
            _rate(chat, floor),
            _rate(general, floor),
            _rate(within, floor),
            pooled,
        )
    return out


def _mean(values: Iterable[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return float(np.mean(kept)) if kept else 0.0


def choose(samples: list[Sample], weights: tuple[float, ...], max_offtopic: float) -> float:
    """The threshold with the best mean recall@10 above the floor.

    Only thresholds count (1.0 when none does) that keep, averaged over the sets,
    `bench.locomo`'s off-topic rate and the foreign-question rate, and every set's chit-chat
    rate, at or below `max_offtopic`.
    """
    samples = [s for s in samples if s.fitted]
    best: tuple[float, float] | None = None
    for threshold in np.arange(0.05, 1.0, 0.01):
        floor = replace(RelevanceFloor(), evidence=weights, threshold=round(float(threshold), 2))
        rows = table(samples, floor)
        above = float(np.mean([r[0] for r in rows.values()]))
        foreign = _mean(r[2] for r in rows.values())
        pooled = _mean(r[6] for r in rows.values())
        chat = max(_mean([r[3]]) for r in rows.values())
        if max(foreign, pooled, chat) <= max_offtopic and (best is None or above > best[0] + 1e-12):
            best = (above, floor.threshold)
    return best[1] if best else 1.0


def cross_validate(samples: list[Sample], max_offtopic: float) -> dict[str, Row]:
    """Each set scored by a model and threshold fitted on the other sets only.

    What the floor does on conversations it was not chosen on.
    """
    out = {}
    for name in sorted({s.dataset for s in samples}):
        rest = [s for s in samples if s.dataset != name]
        weights = fit(rest)
        floor = replace(
            RelevanceFloor(), evidence=weights, threshold=choose(rest, weights, max_offtopic)
        )
        out[name] = table([s for s in samples if s.dataset == name], floor)[name]
    return out


def _print(rows: dict[str, Row]) -> None:
    for name, (above, plain, rate, chat, general, within, pooled) in rows.items():
        print(f"  {name:<12} R@10 above floor {100 * above:5.1f} (R@10 {100 * plain:5.1f}, gap "
              f"{100 * (plain - above):4.1f}), injection: next conversation {within:.3f}, "
              f"bench.locomo off-topic {pooled:.3f}, foreign questions {rate:.3f}, "
              f"chit-chat {chat:.3f}, general questions {general:.3f}")  # fmt: skip
    gap = np.mean([100 * (plain - above) for above, plain, *_ in rows.values()])
    print(f"  mean gap {gap:.1f} points, injection on average: bench.locomo off-topic "
          f"{_mean(r[6] for r in rows.values()):.3f}, foreign questions "
          f"{_mean(r[2] for r in rows.values()):.3f}, general questions "
          f"{_mean(r[4] for r in rows.values()):.3f}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    apply_privacy_defaults()
    parser = argparse.ArgumentParser(prog="python -m bench.relevance_floor")
    parser.add_argument("--data", type=Path, nargs="*", default=[Path("bench/devsets")])
    parser.add_argument(
        "--history",
        type=Path,
        default=Path("bench/devsets/long/long.json"),
        help="one long history to report on too (its off-topic queries: world questions); "
        "'none' leaves it out",
    )
    parser.add_argument(
        "--fit-history", action="store_true", help="fit and threshold on the long history too"
    )
    parser.add_argument(
        "--real",
        type=Path,
        nargs="*",
        default=[],
        help="LoCoMo-format files of real chats (e.g. LongMemEval-S dev), each conversation "
        "its own user: fitted on as a set of their own, not crossed with --data",
    )
    parser.add_argument("--max-offtopic", type=float, default=0.10)
    parser.add_argument("--embed-cache", type=Path, default=None)
    parser.add_argument(
        "--cross-validate", action="store_true", help="also score each set by a leave-one-out fit"
    )
    args = parser.parse_args(argv)
    files = [f for p in args.data for f in (sorted(p.glob("*.json")) if p.is_dir() else [p])]
    settings = Settings.from_env()
    vectors = VectorCache(
        get_embedder(settings.embedding_model, settings.embedding_model_dir), args.embed_cache
    )
    history = None if str(args.history) == "none" else args.history
    samples = asyncio.run(collect(files, vectors, history, args.fit_history, args.real))
    vectors.save()
    weights = fit(samples)
    on_topic = sum(s.on_topic for s in samples)
    print(
        f"{on_topic} on-topic and {len(samples) - on_topic} off-topic queries, {len(files)} files"
    )
    print(f"fitted weights {dict(zip(('bias', *QueryEvidence.NAMES), weights, strict=True))}")
    threshold = choose(samples, weights, args.max_offtopic)
    chosen = replace(RelevanceFloor(), evidence=weights, threshold=threshold)
    for label, floor in (("default", RankingWeights().floor), ("chosen", chosen)):
        print(f"{label}: evidence {floor.evidence}, threshold {floor.threshold}")
        _print(table(samples, floor))
    if threshold >= 1.0:
        print(f"no threshold keeps the off-topic rates <= {args.max_offtopic}")
    if args.cross_validate:
        print("leave one set out (fitted and thresholded on the other sets):")
        _print(cross_validate(samples, args.max_offtopic))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
