"""Absolute relevance: whether a recalled memory bears on the query at all.

Ranking is relative: the fused score is normalised per query over the user's memories, so the
best of three unrelated memories still ranks first with a high score. Whether anything should be
injected is a separate test on raw signals, not on the normalised score:

- the raw cosine between the query and the memory's vector (MiniLM: unrelated sentences sit
  around 0.0-0.25, paraphrases of the same fact around 0.45-0.8);
- word evidence: the idf-weighted share of the query's content words (stopwords removed, light
  stemming, Chinese as character bigrams) found in the memory itself (full weight) or in its
  context (half weight); words the user never used weigh most.

A memory passes when its cosine alone is high, when a moderate cosine is backed by shared
content words, or when its cosine stands far above the query's cosine with the user's other
memories (a query about one thing the user said). Once one result passes, the query is on topic
and the rest of the top k pass from a low companion cosine. A query with no content words
(greetings, thanks, "ok") passes nothing: there is nothing in it to be relevant to. The
thresholds are chosen on the project's own development sets (`bench/devsets/`, see
`bench/relevance_floor.py`), never on an evaluation set.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from memory.recall.lexical import raw_words, tokenize
from memory.types import Relevance

# Words that make up greetings, thanks and acknowledgements. A query made only of these (after
# stopwords) asks nothing a memory could answer.
_CHATTER = frozenset(
    """
hi hello hey hiya yo morning afternoon evening night good great nice cool ok okay k alright
thanks thank thx ty cheer bye goodbye see later soon care bless welcome awesome perfect fine
sure yes yeah yep no nope np lol haha hmm wow sound sounds glad happy day today
谢谢 多谢 感谢 你好 您好 早上 晚上 再见 拜拜 好的 嗯嗯 哈哈 没事 不客气 辛苦
""".split()
)
_NO_TERMS = "the query has no content words"
_CJK_CHATTER = tuple(w for w in _CHATTER if not w.isascii())


@dataclass(frozen=True, slots=True)
class RelevanceFloor:
    """The absolute test a recalled memory must pass to be injected into a prompt.

    Defaults chosen by `python -m bench.relevance_floor` on bench/devsets (the best recall@10
    above the floor with at most 10% of off-topic queries injecting anything): 56.0 above the
    floor of 88.8 recall@10, 9.7% off-topic injection. Same-domain off-topic questions (another
    coding chat's questions against a coding chat) make up most of the off-topic queries, which
    is why the floor is strict.
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
    measured on bench/devsets (2,488 question-memory pairs across different sets)."""
    companion: float = -0.1
    """Once one result passes (the query is about something this user has told), the other
    top results pass from this cosine on: the query is on topic, and ranking orders them."""

    def __post_init__(self) -> None:
        # Run context is client input: a NaN floor would silently pass (or fail) everything.
        for name, low in (
            ("cosine", -1.0),
            ("cosine_with_words", -1.0),
            ("words", 0.0),
            ("companion", -1.0),
            ("outlier", -100.0),
        ):
            value = getattr(self, name)
            high = 100.0 if name == "outlier" else 1.0
            if not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"relevance floor {name} must be a finite number, got {value!r}")
            if not low <= value <= high:
                raise ValueError(
                    f"relevance floor {name} must be in [{low:g}, {high:g}], got {value}"
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
