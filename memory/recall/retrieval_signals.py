"""The per-query signals `UserIndex.search` fuses, each an array over all slots.

Relevance signals are normalised per query (see `memory.recall.ranking.normalise`) before weighting.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Sequence
from datetime import datetime

import numpy as np

from memory.recall.lexical import LexicalIndex, raw_words
from memory.recall.lexical_stopwords import ENGLISH_STOPWORDS
from memory.recall.ranking import RankingWeights, normalise
from memory.recall.retrieval_columns import F32, Bools, Columns
from memory.recall.temporal import TimeRange, asks_when, query_ranges
from memory.recall.temporal_units import ADJACENT_DAYS

# Cosine spread below which dense scores are not stretched: a user's memories that are all
# about equally (un)related to the query should not be ranked as if one were a perfect match.
DENSE_FLOOR = 0.1
# BM25 below which the best match is not stretched to 1. The score is summed over two indexes
# (memory; memory + context), so one rare word scores ~6-12 and a single common topic word
# ("wedding" in a chat full of wedding advice) less. Measured on bench/devsets, R@5 / R@10 summed
# over the four sets: floor 2 -> 589, 5 -> 596, 10 -> 598, 20 -> 639 (long assistant replies
# full of the topic's words stop outranking the user's one-line facts).
LEXICAL_FLOOR = 20.0
MIN_SHARED = 2
RARE = 0.9


def _scaled(total: F32, index: LexicalIndex, tokens: Sequence[str], guard: bool) -> F32:
    """Scores over max(best, LEXICAL_FLOOR); with `guard`, a weak leg counts by its strength.

    When even the best match is below the floor and is made of common words only (a topic word
    that many long replies repeat, not a rare name), the leg has little evidence to add, yet
    summed over many documents it still reorders what dense similarity found. The guard scales
    such a leg by its strength (best / floor) once more, so the fusion falls back toward dense
    similarity; a leg whose best match holds a rare term (idf at least 90% of a term found in
    one memory) or clears the floor is kept as it is.
    """
    best = float(total.max(initial=0.0))
    out = total / max(best, LEXICAL_FLOOR)
    if (
        guard
        and 0.0 < best < LEXICAL_FLOOR
        and not _rare_match(index, int(np.argmax(total)), tokens)
    ):
        out = out * (best / LEXICAL_FLOOR)
    return out.astype(np.float32)


def _rare_match(index: LexicalIndex, slot: int, tokens: Sequence[str]) -> bool:
    n = len(index)
    if n < 2:
        return True
    rarest = math.log(1.0 + (n - 1 + 0.5) / 1.5)
    matched = set(tokens) & index.terms(slot).keys()
    return any(idf >= RARE * rarest for idf in index.idfs(matched).values())


def cosines(cols: Columns, query_vector: np.ndarray) -> F32:
    """The query's raw cosine with every slot's vector."""
    sims: F32 = cols.vectors[: cols.size] @ query_vector.astype(np.float32)
    return sims


def dense(
    cols: Columns,
    query_vector: np.ndarray,
    live: Bools,
    sims: F32 | None = None,
    lowest: float | None = None,
) -> F32:
    """Cosine similarity of every live memory, min-max normalised over the live ones.

    `lowest` also takes part in the minimum: the lowest cosine of the user's memories where the
    index holds only some of them (L2's candidates).
    """
    n = cols.size
    if sims is None:
        sims = cosines(cols, query_vector)
    out = np.zeros(n, dtype=np.float32)
    values = sims[live]
    if lowest is not None and values.size:
        out[live] = normalise(np.append(values, np.float32(lowest)), floor=DENSE_FLOOR)[:-1]
    else:
        out[live] = normalise(values, floor=DENSE_FLOOR)
    return out


def dense_trust(best: float, spread: tuple[float, float], low: float, high: float) -> float:
    """How far the dense leg is trusted for a query, in [0, 1]: how far its best match stands out.

    `z` is how many standard deviations the best cosine stands above the query's cosine with
    the user's memories (`spread`: their mean and standard deviation). An embedding model that
    understands the query puts the memory that answers it well apart from the rest; one that
    does not (all-MiniLM on Chinese: every Chinese text sits at cosine ~0.5 from every other)
    bunches them, and the best "match" is a coin toss that the fusion would still stretch to the
    full dense weight. The trust rises linearly from 0 at `z` = `low` to 1 at `high`; `low` =
    `high` = 0 trusts every query fully. The measure depends on no script or language, so a
    multilingual model that separates Chinese texts well keeps its full weight on them.
    """
    if high <= 0.0:
        return 1.0
    return _ramp(_z(best, spread), low, high)


def lexical_agreement(
    lexical: F32,
    sims: F32,
    spread: tuple[float, float],
    dense_trust: float,
    weights: RankingWeights,
) -> float:
    """The lexical leg's weight factor for this query, in [`lexical_agreement_floor`, 1].

    In a long history the best word match is often a long reply that repeats the query's
    topic words ("errors", "release") without saying anything about what was asked, while the
    user's one-line fact that answers it shares a word or none. BM25 cannot tell the two
    apart; the embedding can. When the dense leg is trusted (`dense_trust`) and the lexical
    leg's best match stands no further above the query's mean cosine than `low` standard
    deviations (little nearer than a memory picked at random), the leg keeps only
    `lexical_agreement_floor` of its weight, all of it from `high` on, linearly in between.
    A leg whose best match the embedding also finds plausible keeps its full weight, and so
    does every query where the dense leg is not trusted (all-MiniLM on Chinese), where the
    words are the better evidence.

    `lexical` is the leg on the query's own words, before feedback expansion, whose terms
    come from the first pass's own top results. The test comes in gradually, from
    `lexical_agreement_trust` to full trust, not as a step that a slightly different estimate
    of the spread would flip. The caller applies it over a user's whole history only.
    """
    gate = _ramp(dense_trust, weights.lexical_agreement_trust, 1.0)
    floor = weights.lexical_agreement_floor
    if weights.lexical_agreement_high <= 0.0 or floor >= 1.0 or gate <= 0.0 or not lexical.size:
        return 1.0
    top = float(lexical.max())
    if top <= 0.0:
        return 1.0
    # Of equally good word matches, the one the embedding finds nearest: the first in the
    # index's order made the verdict depend on the order the memories were indexed in.
    tied = np.flatnonzero(lexical == top)
    z = _z(float(sims[tied].max()), spread)
    share = _ramp(z, weights.lexical_agreement_low, weights.lexical_agreement_high)
    return 1.0 - gate * (1.0 - floor) * (1.0 - share)


def leg_confidence(values: F32, live: Bools, groups: np.ndarray, depth: int) -> float:
    """How peaked a leg's scores are for this query, in [0, 1]: 1 when one session stands out.

    (best - mean of the next `depth - 1`) / best over each session's best memory (a memory
    without a session counts as its own): a leg that has found the answer puts it clear of
    the rest, one that has not gives many memories about the same score. Sessions, not
    memories, because neighbouring turns share their context and score alike, which would
    make a confident leg look flat.
    """
    x = values[live]
    if not x.size:
        return 0.0
    g = groups[live].astype(np.int64)
    own = np.flatnonzero(g < 0)
    g[own] = -1 - own  # each memory without a session is a group of its own
    order = np.argsort(-x, kind="stable")
    _, first = np.unique(g[order], return_index=True)
    top = np.sort(x[order][first])[::-1][:depth]
    best = float(top[0])
    if best <= 0.0 or top.size < 2:
        return 0.0
    return float(np.clip((best - float(top[1:].mean())) / best, 0.0, 1.0))


def fall_back(
    similarity: F32, lexical: F32, live: Bools, groups: np.ndarray, weights: RankingWeights
) -> tuple[F32, F32]:
    """Scale the less confident of the dense and lexical legs toward the more confident one.

    Summed as they are, a flat leg (many memories at about its best) still reorders what a
    peaked leg found, and the fusion ranked below its best single leg. Each leg keeps
    1 - fallback × (1 - its confidence / the higher confidence) of its weight
    (`leg_confidence`): the stronger leg keeps all of it, and a leg as confident as the other
    is untouched, so the step acts only when the legs disagree in how sure they are.
    """
    if weights.fallback <= 0.0:
        return similarity, lexical
    depth = max(weights.fallback_depth, 2)
    dense_c = leg_confidence(similarity, live, groups, depth)
    words_c = leg_confidence(lexical, live, groups, depth)
    strong = max(dense_c, words_c)
    if strong <= 0.0:
        return similarity, lexical
    keep_dense = 1.0 - weights.fallback * (1.0 - dense_c / strong)
    keep_words = 1.0 - weights.fallback * (1.0 - words_c / strong)
    return (similarity * np.float32(keep_dense)).astype(np.float32), (
        lexical * np.float32(keep_words)
    ).astype(np.float32)


def _z(cosine: float, spread: tuple[float, float]) -> float:
    mean, std = spread
    return (cosine - mean) / std if std > 1e-6 else 0.0


def _ramp(z: float, low: float, high: float) -> float:
    """0 at `low`, 1 at `high`, linear in between (a step at `high` when they are equal)."""
    if high <= low:
        return 1.0 if z >= high else 0.0
    return min(max((z - low) / (high - low), 0.0), 1.0)


def lexical(
    indexes: Sequence[LexicalIndex],
    tokens: Sequence[str],
    weights: Sequence[float],
    live: Bools,
    *,
    guard: bool = False,
    shares: Sequence[float] = (),
) -> F32:
    """Summed BM25 of the indexes (memory; memory + context), scaled by the best live match.

    `shares` weighs each index (default 1 each).
    """
    total = np.zeros(len(live), dtype=np.float32)
    for i, index in enumerate(indexes):
        share = shares[i] if i < len(shares) else 1.0
        if share:
            total += np.float32(share) * index.scores(tokens, len(live), weights)
    total[~live] = 0.0
    return _scaled(total, indexes[-1], tokens, guard)


def group(
    index: LexicalIndex,
    slots_group: np.ndarray,
    tokens: Sequence[str],
    n_groups: int,
    *,
    guard: bool = False,
) -> F32:
    """BM25 of each memory's group document (its whole session), scaled by the best group."""
    if not n_groups or not tokens:
        return np.zeros(len(slots_group), dtype=np.float32)
    scores = _scaled(index.scores(tokens, n_groups + 1), index, tokens, guard)
    padded = np.append(scores, np.float32(0.0)).astype(np.float32)  # slot -1 -> 0
    return padded[np.where(slots_group >= 0, slots_group, len(padded) - 1)]


def speaker_names(names: dict[str, int], query: str) -> list[int]:
    """Codes of the speakers the query names (any name word of 2+ letters, not a stopword)."""
    words = {w.removesuffix("'s") for w in raw_words(query)}
    hits = []
    for name, code in names.items():
        parts = [p for p in raw_words(name) if len(p) > 1 and p not in ENGLISH_STOPWORDS]
        if parts and any(p in words for p in parts):
            hits.append(code)
    return hits


def temporal(cols: Columns, query: str, now: datetime, weights: RankingWeights, n: int) -> F32:
    """Weighted time match (query names a time) plus the "when" bonus (query asks for one).

    Only times that place the question's memories count (`query_ranges`): a day word that
    dates the asking ("today", "昨天") matched the most recent memories, whatever they said.
    """
    out = np.zeros(n, dtype=np.float32)
    if weights.temporal:
        ranges = query_ranges(query, now)
        if ranges:
            out += weights.temporal * _range_match(cols, ranges, n)
    if weights.when and asks_when(query):
        out += weights.when * cols.dated[:n].astype(np.float32)
    return out


def _range_match(cols: Columns, ranges: Sequence[TimeRange], n: int) -> F32:
    starts, ends, owners = cols.event_arrays()
    best = np.zeros(n, dtype=np.float32)
    if not len(owners):
        return best
    for r in ranges:
        q_start, q_end = r.start.timestamp(), r.end.timestamp()
        apart = (starts >= q_end) | (ends <= q_start)
        gap = np.maximum(np.maximum(q_start - ends, starts - q_end), 0.0) / 86_400.0
        gap = gap + ADJACENT_DAYS * apart  # as TimeRange.gap_days
        close = closeness_array(gap, r.days)
        np.maximum.at(best, owners, close)
    return best


def closeness_array(gap_days: np.ndarray, query_days: float) -> F32:
    """`memory.recall.temporal.closeness`, vectorised."""
    return np.exp(-gap_days / (1.0 + query_days / 4.0)).astype(np.float32)


def expansion(
    index: LexicalIndex, top: Sequence[int], tokens: Sequence[str], weights: RankingWeights
) -> tuple[list[str], list[float]]:
    """Pseudo-relevance feedback (RM-style): the query plus the top candidates' best terms.

    Terms are scored by their share of each feedback document times idf, so a word common to
    the best candidates but rare in the user's memories is added.
    """
    shares: dict[str, float] = {}
    seen: Counter[str] = Counter()
    for slot in top:
        terms = index.terms(slot)
        length = sum(terms.values()) or 1
        seen.update(terms.keys())
        for term, count in terms.items():
            shares[term] = shares.get(term, 0.0) + count / length
    # A term found in one feedback document only would just lift that document again; terms
    # shared by several of the top documents describe what the query is about.
    own = set(tokens)
    shared = [t for t, c in seen.items() if c >= MIN_SHARED and t not in own]
    pool = {t: shares[t] * idf for t, idf in index.idfs(shared).items()}
    picked = sorted(pool.items(), key=lambda pair: (-pair[1], pair[0]))[: weights.feedback_terms]
    total = sum(s for _, s in picked) or 1.0
    scale = weights.feedback_weight * max(len(own), 1)
    # The query's tokens in their order (not the set's, which varies between processes): the
    # order terms are summed in decides the last bits of a score, and so exact ties.
    query = list(dict.fromkeys(tokens))
    out_tokens = query + [t for t, _ in picked]
    out_weights = [1.0] * len(query) + [scale * s / total for _, s in picked]
    return out_tokens, out_weights


def bridges(
    index: LexicalIndex,
    seed: int,
    names: Collection[str],
    tokens: Sequence[str],
    weights: RankingWeights,
) -> tuple[list[str], list[float]]:
    """The terms that link one first-hop memory (`seed`) to others, with their idf.

    A multi-hop question describes one thing ("the friend who gave me the oboe") and asks about
    another turn that only names it ("Ilse moved to Ghent"). The link is a term the seed shares
    with a few other memories: a name, a place, a number. A term found in the seed alone links
    nothing; one shared by many memories (a speaker label, a topic word of long replies) links
    everything. So a bridge is one of the seed's `names` (see `memory.recall.lexical.name_terms`)
    outside the query whose document frequency is at least 2 and at most `hop_max_share` of the
    memories (never below 2). Ordinary words are left out even when rare: in long assistant
    replies two memories share many rare topic words, and linking by them lifted unrelated
    replies into the top 5 on the development sets.
    """
    own = set(tokens)
    limit = max(2, int(weights.hop_max_share * len(index)))
    picked: dict[str, float] = {}
    for term in names:
        if term in own:
            continue
        if 2 <= index.document_frequency(term) <= limit:
            picked[term] = index.idf(term)
    best = sorted(picked.items(), key=lambda pair: (-pair[1], pair[0]))[: weights.hop_terms]
    return [t for t, _ in best], [w for _, w in best]


def second_hop(
    index: LexicalIndex,
    first: F32,
    seeds: Sequence[int],
    names: Sequence[Collection[str]],
    tokens: Sequence[str],
    weights: RankingWeights,
    live: Bools,
) -> F32:
    """What the second hop adds to each memory's relevance (0 where it adds nothing).

    Each seed links to a memory by the memory's BM25 for the seed's bridge terms (each weighted
    by its idf), scaled so the best-linked memory has 1. The memory's second-hop relevance
    is the best over seeds of `hop` x link x the seed's first-hop relevance, so a linked memory
    rises at most to `hop` times the relevance of the seed that found it (level with it at 1,
    where recency and importance order the two) and never past it; the first hop's order of
    what it already ranked well is kept. Returned is the rise over the first-hop relevance.
    """
    out = np.zeros(len(live), dtype=np.float32)
    for seed, seed_names in zip(seeds, names, strict=True):
        terms, idfs = bridges(index, seed, seed_names, tokens, weights)
        if not terms:
            continue
        scores = index.scores(terms, len(live), idfs)
        scores[seed] = 0.0
        scores[~live] = 0.0
        best = float(scores.max(initial=0.0))
        if best <= 0.0:
            continue
        link = scores / best
        np.maximum(out, weights.hop * link * max(float(first[seed]), 0.0), out=out)
    out[~live] = 0.0
    return np.maximum(out - np.where(live, first, 0.0), 0.0).astype(np.float32)
