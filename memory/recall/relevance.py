"""Absolute relevance: whether a recalled memory bears on the query at all.

Ranking is relative: the fused score is normalised per query over the user's memories, so the
best of three unrelated memories still ranks first with a high score. Whether anything should be
injected is a separate test on raw signals, not on the normalised score:

- the raw cosine between the query and the memory's vector (MiniLM: unrelated sentences sit
  around 0.0-0.25, paraphrases of the same fact around 0.45-0.8);
- word evidence: the idf-weighted share of the query's content words (stopwords removed, light
  stemming, Chinese as character bigrams) found in the memory itself (full weight) or in its
  context (half weight); words the user never used weigh most.

Whether a query is about anything this user has told is decided once per query, by a calibrated
score: a logistic model over several signals of the query against the user's memories
(`QueryEvidence`), because no single cut-off separates on-topic from off-topic queries:

- the best raw cosine among the results, and how many standard deviations it stands above the
  query's cosine with the user's other memories;
- the gap between the best cosine and the user's fifth best (one memory that answers the query
  stands out; a query about nothing in particular is equally close to many);
- the best word share of a result, and the query's coverage: the idf-weighted share of its
  content words that occur anywhere in the user's memories;
- whether the query names something (a capitalised word, not a month or weekday) that the user
  never mentioned: no memory can be about a person or place the user never named.

When the score reaches the threshold (or a result's cosine alone is paraphrase-high), the query is
on topic and the top results pass from a low companion cosine: ranking orders them. A query with
no content words (greetings, thanks, "ok") passes nothing: there is nothing in it to be relevant
to. The model's weights and threshold are fitted on development data only (`python -m
bench.relevance_floor`: the project's own sets and real development chats), never on an
evaluation set. Long real histories and short generated ones each weigh the same in the fit:
a long history makes every query's best cosine stand out of a large crowd and covers most
words, so a model fitted on short histories alone passes nearly any question there.

`judge` and `second_pass` are the single-memory rules (cosine, cosine with shared words, cosine
outlier) kept for callers that judge one memory without a query-level view.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from memory.recall.lexical import raw_words, tokenize, word_tokens
from memory.storage.calibration import CosineScale, language_of
from memory.types import Relevance

# Words that make up greetings, thanks and acknowledgements. A query made only of these (after
# stopwords) asks nothing a memory could answer.
_CHATTER = frozenset(
    """
hi hello hey hiya yo morning afternoon evening night good great nice cool ok okay k alright
thanks thank thx ty cheer bye goodbye see later soon care bless welcome awesome perfect fine
sure yes yeah yep no nope np lol haha hmm wow sound sounds glad happy day today
understood understand got gotcha noted exactly indeed agreed lot lots much
谢谢 多谢 感谢 你好 您好 早上 晚上 再见 拜拜 好的 嗯嗯 哈哈 没事 不客气 辛苦
明白 知道 收到 了解 可以
""".split()
)
_NO_TERMS = "the query has no content words"
_CJK_CHATTER = tuple(w for w in _CHATTER if not w.isascii())
# A capitalised word inside a sentence: a name the query is about. One pass, no backtracking
# beyond a single character of lookbehind, so linear in the query's length.
_NAME = re.compile(r"(?<=[a-z,;:'\"()] )[A-Z][a-z]{2,}")
# Capitalised words that name times, not things: dates are matched by the temporal signal.
_TIME_NAMES = frozenset(
    """
january february march april may june july august september october november december
monday tuesday wednesday thursday friday saturday sunday
""".split()
)


@dataclass(frozen=True, slots=True)
class RelevanceFloor:
    """The absolute test a recalled memory must pass to be injected into a prompt.

    `evidence` and `threshold` are fitted by `python -m bench.relevance_floor` on development
    data only, never on an evaluation set; the fits and the figures behind them are in
    docs/benchmarks.md.
    """

    cosine: float = 0.725
    """Raw cosine at or above which a memory passes on meaning alone."""
    cosine_with_words: float = 0.3
    """Lower cosine that passes when the memory also shares enough of the query's words."""
    words: float = 0.3
    """Share of the query's content words the memory must contain for the lower cosine."""
    outlier: float = 2.5
    """A memory also passes when its cosine stands this many standard deviations above the
    user's other memories (and above `cosine_with_words`): a paraphrase of one thing the user
    said stands out from everything else they said. Needs `min_population` memories."""
    min_population: int = 8
    """Fewer memories than this give no usable spread of their own: the background spread
    below stands in for it."""
    background: tuple[float, float] = (0.044, 0.076)
    """(mean, standard deviation) of the cosine between a question and unrelated memories,
    measured on bench/devsets across different sets (English; `background_for` reads it in
    the query's language)."""
    companion: float = -0.1
    """Once one result passes (the query is about something this user has told), the other
    top results pass from this cosine on: the query is on topic, and ranking orders them."""
    evidence: tuple[float, ...] = (-1.83, 2.44, -0.42, 1.04, 0.8, -0.67, 1.67)
    """Logistic weights of the query-level score: (bias, best cosine, z / 4, best word share,
    coverage, unseen name, 5 x gap); see `QueryEvidence.features`."""
    threshold: float = 0.52
    """A query whose calibrated score reaches this is on topic (1.0: only paraphrase-high cosines
    pass; 0.0: every query with content words passes)."""
    words_alone: float = 0.05
    """The best word share that puts a query on topic by itself where its cosines say little
    (`QueryEvidence.by_words`: a user of a few memories asking in a language the model reads
    poorly). Chosen on the timeline histories (`bench.timeline`, Chinese with all-MiniLM): no
    word route, 0.357 of the questions passed with the right memory first and 7.7% of
    off-topic questions passed; any shared word (> 0), 0.521 and 10.1%; 0.05, 0.479 and 8.2%;
    0.1, 0.432 and 7.7%."""

    poorly_read_threshold: float = 0.58
    """The score a query must reach on its cosines when its user is too small to measure and
    the model reads the query's language poorly (`QueryEvidence.by_words`, calibrated per
    model): there a best cosine a little above the background is no sign of a match. Chosen
    on the timeline histories (`bench.timeline --split all`) as the lowest score at which
    neither local model passes more than a tenth of a small user's off-topic questions
    (docs/benchmarks.md)."""

    question_threshold: float = 0.8
    """The score each question of a message that asks several must reach on its own; the
    message as a whole is held to `threshold`, and so is each question when that is higher.
    A message gets one chance per question, so each chance must be stricter than the single
    query's or multi-question messages inject more often than single questions."""

    def __post_init__(self) -> None:
        # Run context is client input: a NaN floor would silently pass (or fail) everything.
        for name, low in (
            ("cosine", -1.0),
            ("cosine_with_words", -1.0),
            ("words", 0.0),
            ("companion", -1.0),
            ("outlier", -100.0),
            ("threshold", 0.0),
            ("poorly_read_threshold", 0.0),
            ("question_threshold", 0.0),
        ):
            value = getattr(self, name)
            high = 100.0 if name == "outlier" else 1.0
            if not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"relevance floor {name} must be a finite number, got {value!r}")
            if not low <= value <= high:
                raise ValueError(
                    f"relevance floor {name} must be in [{low:g}, {high:g}], got {value}"
                )
        if len(self.evidence) != len(QueryEvidence.NAMES) + 1 or not all(
            isinstance(w, int | float) and math.isfinite(w) and abs(w) <= 100.0
            for w in self.evidence
        ):
            raise ValueError(
                f"relevance floor evidence must be {len(QueryEvidence.NAMES) + 1} finite weights "
                f"in [-100, 100], got {self.evidence!r}"
            )


def content_terms(query: str) -> frozenset[str]:
    """The query's content terms: stemmed non-stopwords, minus greetings and thanks.

    Chinese queries are tokenised into bigrams and unigrams; when any bigram is present the
    unigrams are dropped, so one shared common character does not count as evidence.
    """
    for phrase in _CJK_CHATTER:  # CJK has no spaces: cut the phrase out of its run
        query = query.replace(phrase, " ")
    kept = " ".join(w for w in raw_words(query) if w not in _CHATTER)
    terms = tokenize(kept)
    if any(len(t) == 2 and not t.isascii() for t in terms):
        terms = [t for t in terms if t.isascii() or len(t) > 1]
    return frozenset(terms)


def has_content_terms(text: str) -> bool:
    """`bool(content_terms(text))`, stopping at the first content word.

    Recall asks this of every memory it indexes (greetings and thanks are ranked down), so for
    an L2 recall of ~400 candidates it ran ~400 times a query: ~27 us each through
    `content_terms`, which tokenises and stems every word, ~10 ms a query. Dropping unigrams
    beside a bigram leaves the bigram, so it cannot empty the set: the terms are there as
    soon as one word that is not chatter has tokens.
    """
    if not text.isascii():
        for phrase in _CJK_CHATTER:
            text = text.replace(phrase, " ")
    return any(word_tokens(w) for w in raw_words(text) if w not in _CHATTER)


# Greetings and thanks are short; longer texts are not checked.
CHATTER_CHARS = 120


def is_chatter(own: str) -> bool:
    """Whether a memory's own words carry no content: only greetings, thanks and assent."""
    return len(own) <= CHATTER_CHARS and not has_content_terms(own)


def word_share(
    terms: Collection[str],
    own: Collection[str],
    context: Collection[str],
    idfs: Mapping[str, float] | None = None,
) -> float:
    """Share of `terms` found in the memory's own tokens (1) or only in its context (0.5).

    With `idfs` each term counts by its idf in the user's memories; a term the user never
    used weighs most, so a query about something the user never mentioned scores low even
    when a few of its common words match.
    """
    if not terms:
        return 0.0
    weight = {t: (idfs or {}).get(t, 1.0) for t in terms}
    found = sum(w * (1.0 if t in own else 0.5 if t in context else 0.0) for t, w in weight.items())
    return found / (sum(weight.values()) or 1.0)


def second_pass(floor: RelevanceFloor, verdicts: list[Relevance]) -> list[Relevance]:
    """Let results near a passing one through: the query-level test has already succeeded."""
    if not any(v.passed for v in verdicts):
        return verdicts
    return [
        v
        if v.passed or v.cosine < floor.companion or v.reason == _NO_TERMS
        else Relevance(
            True,
            v.cosine,
            v.words,
            f"another result passed and cosine {v.cosine:.2f} >= {floor.companion:.2f}",
            v.z,
        )
        for v in verdicts
    ]


def background_for(
    floor: RelevanceFloor, scale: CosineScale | None, query: str
) -> tuple[float, float]:
    """The background spread for `query`, standing in for a user too small to measure.

    `floor.background` was measured on English. A model bunches the texts of a language it
    reads poorly far above it (all-MiniLM: any two Chinese texts near 0.66), where every
    memory of a new Chinese user stood eight deviations out and was injected into any
    question; the calibration says where that background sits in the query's language.
    """
    if scale is None:
        return floor.background
    return scale.in_language(floor.background, language_of(query))


def judge(
    floor: RelevanceFloor,
    *,
    cosine: float,
    words: float,
    has_terms: bool,
    spread: tuple[float, float] | None = None,
) -> Relevance:
    """Apply the floor to one memory's raw cosine and word share.

    `spread` is (mean, standard deviation) of the query's cosine over the user's memories,
    when there are enough of them.
    """
    z = 0.0
    if spread is not None and spread[1] > 1e-6:
        z = (cosine - spread[0]) / spread[1]
    if not has_terms:
        return Relevance(False, cosine, words, _NO_TERMS, z)
    if cosine >= floor.cosine:
        return Relevance(True, cosine, words, f"cosine {cosine:.2f} >= {floor.cosine:.2f}", z)
    if words >= floor.words and cosine >= floor.cosine_with_words:
        return Relevance(
            True,
            cosine,
            words,
            f"{words:.0%} of the query's words and cosine {cosine:.2f} >= "
            f"{floor.cosine_with_words:.2f}",
            z,
        )
    if spread is not None and z >= floor.outlier and cosine >= floor.cosine_with_words:
        reason = f"cosine {cosine:.2f} stands {z:.1f} sd above the user's other memories"
        return Relevance(True, cosine, words, reason, z)
    return Relevance(
        False,
        cosine,
        words,
        f"cosine {cosine:.2f} < {floor.cosine:.2f}; words {words:.0%} < {floor.words:.0%} or "
        f"cosine < {floor.cosine_with_words:.2f}; {z:.1f} sd < {floor.outlier:.1f}",
        z,
    )


def unseen_names(query: str, known: Collection[str]) -> bool:
    """Whether the query names a thing (a capitalised word mid-sentence) absent from `known`.

    `known` holds the user's (stemmed) terms; months and weekdays are times, not names.
    """
    for match in _NAME.finditer(query[:2000]):
        word = match.group(0).lower()
        if word in _TIME_NAMES:
            continue
        terms = tokenize(word)
        if terms and not any(t in known for t in terms):
            return True
    return False


@dataclass(frozen=True, slots=True)
class QueryEvidence:
    """What the query has in common with one user's memories, as the calibrated score sees it."""

    cosine: float
    """Best raw cosine among the results."""
    z: float
    """Standard deviations the best cosine stands above the query's mean over the memories."""
    words: float
    """Best word share (`word_share`) among the results."""
    coverage: float
    """Idf-weighted share of the query's content terms found anywhere in the user's memories."""
    unseen_name: bool
    """The query names something the user never mentioned."""
    gap: float
    """Best cosine minus the user's fifth best (the background mean stands in below five)."""
    by_words: bool = False
    """The user is too small to measure and the model reads the query's language poorly
    (`CosineScale.reads_poorly`): the best word share alone may put the query on topic."""

    NAMES = ("cosine", "z", "words", "coverage", "unseen_name", "gap")

    def features(self) -> tuple[float, ...]:
        """The model's inputs, scaled to comparable ranges (z clipped to [-3, 8])."""
        z = min(max(self.z, -3.0), 8.0) / 4.0
        return (self.cosine, z, self.words, self.coverage, float(self.unseen_name), 5 * self.gap)

    def score(self, floor: RelevanceFloor) -> float:
        """The calibrated probability that the query is about something in these memories."""
        bias, *weights = floor.evidence
        logit = bias + sum(w * x for w, x in zip(weights, self.features(), strict=True))
        return 1.0 / (1.0 + math.exp(-min(max(logit, -50.0), 50.0)))

    def describe(self, score: float) -> str:
        """The inputs and the score, for `--explain`."""
        return (
            f"query evidence {score:.2f} (best cosine {self.cosine:.2f}, {self.z:.1f} sd, gap "
            f"{self.gap:.2f}, words {self.words:.0%}, coverage {self.coverage:.0%}"
            + (", names something never mentioned" if self.unseen_name else "")
            + ")"
        )


def query_verdicts(
    floor: RelevanceFloor,
    evidence: QueryEvidence,
    cosines: Sequence[float],
    shares: Sequence[float],
    *,
    has_terms: bool,
) -> list[Relevance]:
    """One verdict per result: the query-level test first, then each result's own cosine."""
    score = evidence.score(floor)
    summary = evidence.describe(score)
    strong = any(c >= floor.cosine for c in cosines)
    by_words = evidence.by_words and evidence.words >= floor.words_alone
    # Where the cosines say little (a small user, a language the model reads poorly), a query
    # passes on them only at a higher score; a shared word still passes it by itself.
    threshold = (
        max(floor.threshold, floor.poorly_read_threshold) if evidence.by_words else floor.threshold
    )
    on_topic = has_terms and (score >= threshold or strong or by_words)
    out = []
    for cosine, words in zip(cosines, shares, strict=True):
        if not has_terms:
            out.append(Relevance(False, cosine, words, _NO_TERMS, evidence.z, score))
        elif cosine >= floor.cosine:
            reason = f"cosine {cosine:.2f} >= {floor.cosine:.2f}; {summary}"
            out.append(Relevance(True, cosine, words, reason, evidence.z, score))
        elif on_topic and cosine >= floor.companion:
            why = (
                f">= {threshold:.2f}"
                if score >= threshold
                else f"words {evidence.words:.0%} >= {floor.words_alone:.0%}, cosines say little"
                if by_words
                else "< threshold"
            )
            reason = f"on topic: {summary} {why}; cosine {cosine:.2f} >= {floor.companion:.2f}"
            out.append(Relevance(True, cosine, words, reason, evidence.z, score))
        else:
            reason = (
                f"{summary} < {threshold:.2f} and cosine {cosine:.2f} < {floor.cosine:.2f}"
                if not on_topic
                else f"cosine {cosine:.2f} < companion {floor.companion:.2f}"
            )
            out.append(Relevance(False, cosine, words, reason, evidence.z, score))
    return out
