"""Recall ranking: the weights and the arithmetic that turns signals into scores.

score = α·similarity + lexical + β·recency + γ·importance + access boost + temporal: dense
similarity alone misses exact names and dates, so lexical and temporal signals join it. Every
term is computed as an array over all candidate memories by `memory.recall.retrieval`; this
module holds the weights and the per-term formulas, so a score breakdown always shows the same
numbers the ranking used.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
import numpy.typing as npt

from memory.recall.relevance import RelevanceFloor
from memory.types import MemoryKind, ScoreBreakdown

Array = npt.NDArray[np.float32]

_SECONDS_PER_DAY = 86_400.0


def default_half_lives() -> Mapping[MemoryKind, float]:
    """Recency half-lives in days: events fade in weeks, knowledge in a year."""
    return MappingProxyType(
        {
            MemoryKind.EPISODIC: 30.0,
            MemoryKind.SEMANTIC: 180.0,
            MemoryKind.PROCEDURAL: 365.0,
            MemoryKind.PREFERENCE: 365.0,
        }
    )


@dataclass(frozen=True, slots=True)
class RankingWeights:
    """How recall weighs its signals.

    Every weight the development sets (bench/devsets: coding and planning chats with long
    replies, one-speaker notes, Chinese chats, short assistant chats, dated journals asked about
    by month; 88 questions with gold turns) can tell apart is chosen on them by
    `python -m bench.fit_ranking`: a coordinate search over round values, objective the mean
    over the sets of recall@5 + recall@10, and a weight moves only if the move gains on at least
    three sets and loses no set more than one question. On those sets each such default is the
    best value of its grid or ties with it: `alpha` 0.8, `weak_leg_guard` and `feedback_terms`
    10 are strict maxima (every other value loses on one to four sets); `lexical` 1.0-1.5,
    `group` 0.4-0.6, `beta` 0.02-0.2, `temporal` 0.4-1.2 (0 loses two of the dated set's
    questions at recall@5), `feedback_docs` 5-20, `feedback_weight` 0.1-0.3 and
    `feedback_confidence` 0.25-0.75 tie, and the default is kept within the tie. `when` is the
    exception: 0 to 0.8 tie on every set, and 0.4 stays, a value first set on LoCoMo. (It once
    pushed planning's "... and for how long?" out of the top 5: the answer, "three nights",
    was not recognised as stating a time, so every dated memory outranked it; durations in
    nights, hours and minutes now count.) Leave-one-set-out (eight sets, each search starting
    from these defaults): all eight fits without one set keep the same values. The second hop
    (`hop`) is informed by the two multi-hop sets and the long-history check only (see
    `hop`).

    The sets do not inform `speaker` (no question names a speaker), `gamma` (raw memories all
    have importance 0.5), `access` and `access_cap` (no memory has been recalled before) or
    `overfetch` (no value changes any set's recall). Those keep their earlier values, which
    were set on LoCoMo before the project ruled that weights are chosen on its own data only.

    Since then recall collapses copies of one text and gives chatter no dense similarity
    (`memory.recall.retrieval`); a one-pass search from these defaults on the eight sets
    (`python -m bench.fit_ranking --passes 1 --no-loso`) moves none of them, nor does it once
    the dense leg is weighted by its trust (`dense_trust_low`) and Chinese question words are
    stopwords.

    `role` is chosen on the LongMemEval-S development chats and the dev sets together
    (docs/benchmarks.md): 0.6 and 0.8 tie, 0.4 and 0.2 lose on the long chats, and no dev set
    loses at any of them.

    `lexical_context`, `fallback` and `feedback_docs` (off) are set on long real chats
    (LongMemEval-S development conversations, fitted on half and checked on the other half;
    docs/benchmarks.md), where the values above let one session's neighbouring turns and long
    replies outrank the turn that answers; the short sets above do not choose them.

    Relevance (similarity, lexical, speaker, group, temporal) dominates; recency, importance and
    access are small so they order near-ties rather than override what the query asked for.
    """

    alpha: float = 0.8
    """α: weight of dense cosine similarity, min-max normalised over the user's memories."""
    lexical: float = 1.0
    """Weight of BM25 over the memory text plus its context, normalised by the best match."""
    lexical_context: float = 0.0
    """How the lexical leg splits its two BM25 indexes: the memory's own words get
    2 - lexical_context, its words plus context (neighbouring turns) lexical_context. 1 weighs
    them alike; 0 scores own words only, so a turn next to a long reply full of the query's
    words does not tie with the turn that answers."""
    speaker: float = 0.4
    """Added when the query names the memory's speaker ("what did Anna say ..."); part of the
    lexical term in the breakdown."""
    role: float = 0.6
    """Added to every memory not said by the other side when the query asks about the user's
    own words ("my", "我") or the assistant's ("what did you recommend", "你推荐的"), see
    `memory.recall.asked_of`, and only where the asked side has memories: the asked side's
    memories and those with no recorded role (written before roles were) are lifted, the other
    side's and pasted documents are not. Part of the lexical term in the breakdown."""
    group: float = 0.4
    """Weight of BM25 over the memory's whole session/thread (its group): a turn whose
    conversation is about the query ranks above an isolated word match; part of lexical."""
    beta: float = 0.05
    """β: weight of recency, an exponential decay with the kind's half-life."""
    gamma: float = 0.05
    """γ: weight of importance (in [0, 1])."""
    access: float = 0.02
    """Access-frequency boost per log1p(access_count): what a user returns to matters more."""
    access_cap: float = 0.06
    """Upper bound of the access boost, so popular memories cannot crowd out relevant ones."""
    temporal: float = 0.8
    """Weight of the match between a time the query names and when the memory happened."""
    when: float = 0.4
    """Added for memories that state a time when the query asks for one ("when did ...");
    part of the temporal term in the breakdown."""
    half_life_days: Mapping[MemoryKind, float] = field(default_factory=default_half_lives)
    """Recency half-life per memory kind: events fade in weeks, long-term knowledge in a year."""
    overfetch: int = 4
    """Candidates taken by relevance before the final ranking, as a multiple of k."""
    feedback_docs: int = 0
    """Pseudo-relevance feedback: expand the query with terms of this many top candidates
    (0 switches it off). Off: in long chats the first pass's best candidates are long replies,
    and their topic words drowned the query's own (figures in docs/benchmarks.md)."""
    feedback_terms: int = 10
    """How many expansion terms pseudo-relevance feedback adds."""
    feedback_weight: float = 0.3
    """Weight of the expansion terms relative to the query's own terms."""
    feedback_confidence: float = 0.5
    """Expand only when the first pass's lexical leg is at least this strong (its best match
    over its floor, see `memory.recall.retrieval_signals`; 0 expands whenever a word matched).
    Chosen on bench/devsets: with 0, three of five sets rank below dense-only at R@5 (long
    replies feed the expansion with their topic words); with 0.5, one (planning); 0.25 to 0.75
    tie on recall (`python -m bench.fit_ranking`)."""
    weak_leg_guard: bool = True
    """Scale a lexical leg (memory, group) whose best match is below its floor by its strength
    once more, so fusion falls back toward dense similarity when the words barely match (see
    `memory.recall.retrieval_signals`)."""
    hop: float = 0.5
    """The second hop (0 switches it off): a memory that shares a rare name, place or number
    with one of the first hop's best results (a seed) rises to at most this share of the
    seed's relevance, times how strongly it is linked (1 for the best-linked memory); the rise
    is part of the lexical term in the breakdown (see
    `memory.recall.retrieval_signals.second_hop`). Chosen by `python -m bench.fit_ranking
    --data bench/devsets bench/devsets/long` (R@5/R@10): 0.5 gains on the three sets it
    changes and loses on none (hops 83.3/85.1 -> 83.3/86.2, hops_zh 72.2/75.0 -> 72.2/77.8,
    the long-history check 55.0/67.1 -> 55.5/67.6). 1.0 gains far more on the short multi-hop
    sets (86.2/87.9, 94.4/94.4) but costs the long history R@5 (53.8/67.6): in a long history
    names recur, and the memories a name links are more often unrelated. The choice is
    fragile: a fit without any one of those three sets leaves it at 0."""
    hop_seeds: int = 5
    """How many of the first hop's best memories the second hop starts from (3, 5 and 8 tie
    at `hop` 0.5; at 1.0, 3 gives hops_zh 86.1/86.1 where 5 and 8 tie at 94.4/94.4)."""
    hop_terms: int = 8
    """At most this many bridge terms (the rarest) per seed make the second hop (4-16 tie)."""
    hop_max_share: float = 0.005
    """A bridge term is in at most this share of the user's memories (and never fewer than 2):
    rarer than a name that recurs through a long history, shared by more than the seed alone.
    With `hop` 1 on the long-history check: 0.02 -> R@5/R@10 51.9/62.9, 0.005 -> 53.8/67.6
    (off: 55.0/67.1); the short sets cannot tell the values apart (their limit is 2 either
    way)."""
    dense_trust_low: float = 1.0
    """The dense leg gets no weight for a query whose best cosine stands at most this many
    standard deviations above the query's cosine with the user's memories (see
    `memory.recall.retrieval_signals.dense_trust`). With all-MiniLM the median is ~3 on the
    English dev sets and ~1.7-2.0 on the Chinese ones, where dense-only finds the answer in
    the top 5 for a third of the questions. Chosen with `dense_trust_high` by `python -m
    bench.fit_dense_trust` (fewest (set, k) cells below BM25 or dense-only, then the mean over
    the eight sets of R@5 + R@10): 1.0-3.0 leaves no set below either baseline and raises the
    mean from 93.6 (off) to 94.9 (hops_zh R@5 83.3 -> 91.7, zh R@10 77.3 -> 86.4, planning
    R@10 93.8 -> 100; assistant R@5 93.8 -> 90.6, level with dense-only). Leave-one-set-out:
    six fits without one set pick 1.0-3.0, the other two 1.0-2.5 and 1.25-2.75; each held-out
    set is at least as good as BM25 and dense-only under its fit."""
    dense_trust_high: float = 3.0
    """... and its full weight (`alpha`) from this many on, linearly in between; 0 switches the
    trust off (full weight always)."""
    lexical_agreement_low: float = 2.0
    """The lexical leg's best match must stand this many standard deviations above the
    query's mean cosine for its weight to start rising from `lexical_agreement_floor`, when
    the dense leg is trusted (see `memory.recall.retrieval_signals.lexical_agreement`)."""
    lexical_agreement_high: float = 2.5
    """... and has its full weight from this many on; 0 switches the agreement test off."""
    lexical_agreement_floor: float = 0.5
    """The share of its weight a lexical leg keeps when its best match is no nearer the query
    in meaning than `lexical_agreement_low`. Chosen with the two above by `python -m
    bench.fit_dense_trust --leg lexical` (low 0.5-2, high 2.5-4, floor 0-0.7, on the eight
    dev sets and the long-history check), the mildest point within one question of the best:
    the long history goes from 69.0/78.9 R@5/R@10 (below dense-only's 71.5 at R@5) to
    73.4/81.8, and to 71.4-73.9 / 80.3-82.2 at every grid point with `high` 2.5-3 and a floor
    of 0-0.5 (0.7 gives most of the gain back: 69.5-70.0 / 79.4-80.3). No other set changes
    while `high` is at most 3 (from 3.5 on, hops loses half a question at R@5). Only the long
    history informs these values: fitted without it, the test stays off."""
    lexical_agreement_trust: float = 0.8
    """The dense leg's trust from which the agreement test starts to apply (fully at trust 1).
    On the dev sets 0.5 to 0.9 tie (long history 73.4/81.8); at 0.3 or less the Chinese sets lose
    a question each at R@5 (all-MiniLM's trust on Chinese is partial, and there the words
    decide); 1, a step that a slightly different spread estimate flips, costs the long history
    a question at R@5 (72.5/81.8)."""
    diversity: float = 0.0
    """Diversity of the top k (0 switches it off): a candidate keeps 1 - diversity × its
    redundancy with the results already taken (see `diversify`). Neighbouring turns are
    embedded with the same context and score alike, and one session could fill the top 5.
    Off by default: once the lexical leg scores a turn's own words (`lexical_context`), the
    step no longer gained on the development chats."""
    diversity_session: float = 0.25
    """The redundancy of two memories of the same session (group) whatever their vectors: a
    session holds one thread, and a second turn of it tells less than another session."""
    diversity_vector: float = 0.0
    """The redundancy of two memories whose vectors are as close as can be, relative to the
    candidates' typical pair (see `diversify`): near-identical texts from different sessions.
    Kept below 1 because memories on one topic are close too, and the one that answers is
    often among them."""
    fallback: float = 0.5
    """How far fusion falls back toward the more confident of the dense and lexical legs for
    a query (0 off, 1 a leg keeps only its confidence's share of the stronger one's; see
    `memory.recall.retrieval_signals.fall_back`). Halfway: fully, it overrides the dense
    trust and lexical agreement tests on short chats where they were right."""
    fallback_depth: int = 10
    """How many sessions a leg's confidence compares its best with."""
    floor: RelevanceFloor = field(default_factory=RelevanceFloor)
    """The absolute test a result must pass to count as relevant (to be injected)."""

    def half_life(self, kind: MemoryKind) -> float:
        """The half-life in days for `kind` (30 days when the mapping lacks it)."""
        return float(self.half_life_days.get(kind, 30.0))


def recency(ages_seconds: Array, half_lives_days: Array) -> Array:
    """0.5 ** (age / half-life), in (0, 1]; memories dated in the future count as new."""
    ages_days = np.maximum(ages_seconds, 0.0) / _SECONDS_PER_DAY
    return np.exp2(-ages_days / np.maximum(half_lives_days, 1e-3)).astype(np.float32)


def access_boost(counts: Array, weights: RankingWeights) -> Array:
    """min(log1p(count)·c, cap): frequently used memories rise, by a bounded amount."""
    return np.minimum(np.log1p(np.maximum(counts, 0.0)) * weights.access, weights.access_cap)


def normalise(values: Array, *, floor: float) -> Array:
    """Min-max scale to [0, 1] with the spread floored at `floor`.

    Per-query normalisation makes BM25 (unbounded) and cosine (bunched around 0.2-0.5 for
    MiniLM) commensurable; the floor keeps a set of uniformly weak matches weak instead of
    stretching noise to the full range.
    """
    if values.size == 0:
        return values
    low = float(values.min())
    spread = max(float(values.max()) - low, floor)
    return ((values - low) / spread).astype(np.float32)


_TERMS = ("similarity", "lexical", "recency", "importance", "access", "temporal")


@dataclass(frozen=True, slots=True)
class Redundancy:
    """What `diversify` compares candidates by: unit vectors and session ids (-1: none)."""

    vectors: npt.NDArray[np.float32]
    groups: npt.NDArray[np.int32]
    weight: float
    session: float
    vector: float


def top_k(
    ids: Sequence[str],
    terms: Mapping[str, Array],
    k: int,
    copies: Sequence[Hashable] | None = None,
    redundancy: Redundancy | None = None,
) -> list[tuple[str, ScoreBreakdown]]:
    """The k best (id, breakdown) pairs from weighted term arrays aligned with `ids`.

    Totals are summed in float64 in `ScoreBreakdown.total`'s order, exactly as Python sums the
    breakdown's floats, so the sort key is the very total each returned breakdown reports.
    Ties go to the smaller id, so equal memories always come back in the same order. With
    `copies` (a text key per id) copies of a result already taken follow every distinct
    result (see `distinct_first`). With `redundancy` the distinct results are chosen by
    `diversify` and each breakdown's `diversity` holds its loss, so totals stay sorted.
    """
    columns = [np.asarray(terms[name], dtype=np.float64) for name in _TERMS]
    total = columns[0] + columns[1]
    for column in columns[2:]:
        total = total + column
    order = sorted(range(len(ids)), key=lambda i: (-total[i], ids[i]))
    losses = np.zeros(len(ids), dtype=np.float64)
    if redundancy is not None and redundancy.weight > 0.0:
        seen: set[Hashable] = set()
        first: list[int] = []
        repeats: list[int] = []
        for i in order:
            key = copies[i] if copies is not None else i
            (repeats if key in seen else first).append(i)
            seen.add(key)
        picked, losses = diversify(first, total, redundancy, k)
        order = (picked + repeats)[:k]
    else:
        order = distinct_first(order, copies, k) if copies is not None else order[:k]
    return [(ids[i], _breakdown([float(c[i]) for c in columns], float(losses[i]))) for i in order]


def diversify(
    order: Sequence[int], total: npt.NDArray[np.float64], redundancy: Redundancy, k: int
) -> tuple[list[int], npt.NDArray[np.float64]]:
    """Greedy maximal marginal relevance over `order` (positions, best first): k picks.

    Each step takes the candidate with the highest total × (1 - weight × redundancy), where
    its redundancy is its highest with any result already taken: `vector` × how much closer
    their vectors are than the pool's typical pair ((cos - median) / (1 - median), so that no
    embedding model's cosine scale is assumed), or `session` if they share a session,
    whichever is higher. The scale is the candidate's own total, so the step is unit-free and
    a candidate loses at most `weight` of its score. Returns the picks and each position's
    loss (0 for all but the picks that lost something); a pick's total plus its loss never
    exceeds the previous pick's, so results stay sorted.
    """
    losses = np.zeros(len(total), dtype=np.float64)
    if not order:
        return [], losses
    pool = np.asarray(order, dtype=np.int64)
    vectors = redundancy.vectors[pool].astype(np.float64)
    groups = redundancy.groups[pool]
    base = np.maximum(total[pool], 0.0)
    cosines = vectors @ vectors.T
    typical = (
        float(np.median(cosines[~np.eye(len(pool), dtype=np.bool_)])) if len(pool) > 1 else 0.0
    )
    typical = min(typical, 0.99)
    close = redundancy.vector * np.clip((cosines - typical) / (1.0 - typical), 0.0, 1.0)
    worst = np.zeros(len(pool), dtype=np.float64)  # each candidate's redundancy so far
    open_ = np.ones(len(pool), dtype=np.bool_)
    picked: list[int] = []
    while len(picked) < k and open_.any():
        adjusted = np.where(open_, total[pool] - redundancy.weight * worst * base, -np.inf)
        j = int(np.argmax(adjusted))  # first maximum: earlier in `order` wins ties
        losses[pool[j]] = float(adjusted[j] - total[pool[j]])
        picked.append(int(pool[j]))
        open_[j] = False
        same = redundancy.session * ((groups == groups[j]) & (groups[j] >= 0))
        worst = np.maximum(worst, np.maximum(same, close[j]))
    return picked, losses


def distinct_first(order: Sequence[int], copies: Sequence[Hashable], k: int) -> list[int]:
    """The k first positions of `order` with every repeated copy moved behind all distinct ones.

    `copies[i]` is position i's text key; positions with the same key say the same thing word
    for word (a question asked twice, an assistant's stock reply, a history imported before
    consolidation merged its duplicates). A copy adds nothing to what its best-ranked twin
    already told, yet each takes a recall slot: three copies of a generic reply pushed the
    one memory that answered the question out of the top 5. So the best copy keeps its place
    and the others follow every distinct result, in their own order; a result list is
    therefore sorted by total among distinct results, and copies come last.
    """
    seen: set[Hashable] = set()
    first: list[int] = []
    repeats: list[int] = []
    for i in order:
        key = copies[i]
        (repeats if key in seen else first).append(i)
        seen.add(key)
        if len(first) >= k:
            break
    return (first + repeats)[:k]


def _breakdown(values: list[float], diversity: float = 0.0) -> ScoreBreakdown:
    similarity, lexical, rec, importance, access, temporal = values
    return ScoreBreakdown(
        similarity, lexical, rec, importance, access, temporal, diversity=diversity
    )
