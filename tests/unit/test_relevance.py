"""The relevance floor's pieces: content terms, word share, the verdict and its second pass."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.recall.relevance import (
    QueryEvidence,
    RelevanceFloor,
    content_terms,
    has_content_terms,
    judge,
    query_verdicts,
    second_pass,
    unseen_names,
    word_share,
)

FLOOR = RelevanceFloor()


@pytest.mark.parametrize(
    "query",
    [
        "hi",
        "Hello there!",
        "thanks!",
        "Thank you so much",
        "ok",
        "bye, see you later",
        "lol",
        "Good morning :)",
        "谢谢！",
        "你好",
        "好的",
        "再见",
        "Great, thanks a lot!",
        "好的，明白了",
        "ok got it",
        "",
        "   ",
        "?!",
    ],  # fmt: skip
)
def test_chit_chat_has_no_content_terms(query: str) -> None:
    assert content_terms(query) == frozenset()
    assert not judge(FLOOR, cosine=0.99, words=1.0, has_terms=False).passed


def test_content_terms_keep_the_subject() -> None:
    assert content_terms("What is the capital of Australia?") == {"capital", "australia"}
    assert "allergy" in content_terms("Thanks! Do I have any allergies?")
    zh = content_terms("我对什么食物过敏？")
    assert "过敏" in zh and all(len(t) > 1 for t in zh)  # unigrams dropped beside bigrams


# Words and pieces that sit on each side of the content test: chatter, stopwords, "'s",
# Chinese chatter phrases, question words and stop characters, and words that carry content.
_PIECES = [
    "ok", "thanks", "Thank", "you", "the", "is", "it's", "'s", "a", "Sounds", "good", "oboe",
    "Lisbon", "4.2", "谢谢", "好的", "你好", "什么", "吗", "的", "了", "过敏", "手术", "猫",
    "ＴＨＡＮＫＳ", " ", ",", "!", "？", "，",
]  # fmt: skip


@given(st.lists(st.sampled_from(_PIECES), max_size=8), st.text(max_size=40))
@settings(max_examples=400, deadline=None)
def test_has_content_terms_agrees_with_content_terms(pieces: list[str], noise: str) -> None:
    for text in ("".join(pieces), " ".join(pieces), noise, " ".join(pieces) + noise):
        assert has_content_terms(text) == bool(content_terms(text)), text


def test_word_share_weights_rare_and_own_words() -> None:
    terms = {"oboe", "niece"}
    assert word_share(terms, {"oboe", "niece"}, set()) == 1.0
    assert word_share(terms, set(), {"oboe", "niece"}) == 0.5
    assert word_share(terms, {"niece"}, set(), {"oboe": 3.0, "niece": 1.0}) == 0.25
    assert word_share(set(), {"x"}, set()) == 0.0


def test_verdicts() -> None:
    assert judge(FLOOR, cosine=0.8, words=0.0, has_terms=True).passed
    assert judge(FLOOR, cosine=0.4, words=0.6, has_terms=True).passed
    assert not judge(FLOOR, cosine=0.1, words=1.0, has_terms=True).passed
    assert not judge(FLOOR, cosine=0.4, words=0.0, has_terms=True, spread=(0.35, 0.1)).passed
    outlier = judge(FLOOR, cosine=0.6, words=0.0, has_terms=True, spread=(0.05, 0.08))
    assert outlier.passed and "sd above" in outlier.reason


def test_second_pass_follows_only_a_passing_result() -> None:
    weak = judge(FLOOR, cosine=0.25, words=0.0, has_terms=True)
    strong = judge(FLOOR, cosine=0.9, words=0.0, has_terms=True)
    assert not any(v.passed for v in second_pass(FLOOR, [weak, weak]))
    assert all(v.passed for v in second_pass(FLOOR, [strong, weak]))
    none = judge(FLOOR, cosine=0.9, words=0.0, has_terms=False)
    assert not second_pass(FLOOR, [strong, none])[1].passed


@pytest.mark.parametrize(
    "bad",
    [
        {"cosine": math.nan},
        {"words": 1.5},
        {"cosine_with_words": -2.0},
        {"companion": math.inf},
        {"outlier": 1e9},
    ],  # fmt: skip
)
def test_bad_floors_are_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="relevance floor"):
        RelevanceFloor(**bad)


@given(
    st.floats(-1, 1, allow_nan=False),
    st.floats(0, 1, allow_nan=False),
    st.booleans(),
    st.text(max_size=300),
)
@settings(max_examples=200, deadline=None)
def test_any_input_gets_a_verdict_with_a_reason(
    cosine: float, words: float, terms: bool, query: str
) -> None:
    verdict = judge(FLOOR, cosine=cosine, words=words, has_terms=terms)
    assert verdict.reason
    assert not verdict.passed or terms
    content_terms(query)  # never raises, whatever the text


def _evidence(**over: float | bool) -> QueryEvidence:
    base: dict[str, float | bool] = {
        "cosine": 0.2,
        "z": 1.0,
        "words": 0.0,
        "coverage": 0.0,
        "unseen_name": False,
        "gap": 0.01,
    }
    base.update(over)
    return QueryEvidence(**base)  # type: ignore[arg-type]


def test_the_query_score_rises_with_each_signal() -> None:
    weak = _evidence()
    assert weak.score(FLOOR) < FLOOR.threshold
    for change in ({"cosine": 0.6}, {"coverage": 1.0}, {"words": 1.0}, {"gap": 0.2}):
        assert _evidence(**change).score(FLOOR) > weak.score(FLOOR), change
    named = _evidence(cosine=0.5, coverage=0.5, unseen_name=True)
    assert named.score(FLOOR) < _evidence(cosine=0.5, coverage=0.5).score(FLOOR)
    assert 0.0 < _evidence(cosine=1e9, gap=1e9).score(FLOOR) <= 1.0  # no overflow


def test_query_verdicts_pass_all_or_nothing_and_say_why() -> None:
    on = _evidence(cosine=0.55, z=5.0, words=0.5, coverage=1.0, gap=0.2)
    off = _evidence()
    passed = query_verdicts(FLOOR, on, [0.55, 0.1], [0.5, 0.0], has_terms=True)
    assert all(v.passed for v in passed)
    assert "on topic" in passed[1].reason and "query evidence" in passed[1].reason
    assert passed[0].evidence is not None and passed[0].evidence >= FLOOR.threshold
    failed = query_verdicts(FLOOR, off, [0.2, 0.1], [0.0, 0.0], has_terms=True)
    assert not any(v.passed for v in failed)
    assert all("query evidence" in v.reason and "cosine" in v.reason for v in failed)
    # A paraphrase-high cosine passes on its own; a query without content words never does.
    alone = query_verdicts(FLOOR, off, [0.9, 0.1], [0.0, 0.0], has_terms=True)
    assert alone[0].passed and alone[1].passed
    assert not any(v.passed for v in query_verdicts(FLOOR, on, [0.9], [1.0], has_terms=False))


def test_the_threshold_bounds_the_query_test() -> None:
    on = _evidence(cosine=0.55, z=5.0, words=0.5, coverage=1.0, gap=0.2)
    never = RelevanceFloor(threshold=1.0)
    assert not any(v.passed for v in query_verdicts(never, on, [0.55], [0.5], has_terms=True))
    always = RelevanceFloor(threshold=0.0)
    assert all(v.passed for v in query_verdicts(always, _evidence(), [0.1], [0.0], has_terms=True))


@pytest.mark.parametrize(
    ("query", "unseen"),
    [
        ("What is the capital of Australia?", True),
        ("What did Caroline say about the trip?", True),
        ("Where do I keep Bubbles?", False),  # the user named the starter Bubbles
        ("What did we do in June?", False),  # a month is a time, not a name
        ("Which language do I prefer?", False),
        ("What is happening?", False),  # the first word of a sentence is no name
    ],  # fmt: skip
)
def test_unseen_names(query: str, unseen: bool) -> None:
    known = {"bubbl", "starter", "fridg", "prefer", "typescript"}
    assert unseen_names(query, known) is unseen


@given(st.text(max_size=3000))
@settings(max_examples=200, deadline=None)
def test_unseen_names_takes_any_text(query: str) -> None:
    assert isinstance(unseen_names(query, set()), bool)


@pytest.mark.parametrize(
    "bad",
    [
        {"threshold": 1.5},
        {"threshold": math.nan},
        {"evidence": (1.0, 2.0)},
        {"evidence": (math.nan,) * 7},
    ],  # fmt: skip
)
def test_bad_query_models_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="relevance floor"):
        RelevanceFloor(**bad)  # type: ignore[arg-type]


def test_where_the_model_reads_the_language_poorly_cosines_need_a_higher_score() -> None:
    # A small user asking in a language the model reads poorly: a score between the ordinary
    # threshold and `poorly_read_threshold` no longer passes on cosines; a shared word does.
    assert FLOOR.poorly_read_threshold > FLOOR.threshold
    between = next(
        e
        for c in (x / 200 for x in range(200))
        if FLOOR.threshold
        <= (e := _evidence(cosine=c, z=2.8, gap=0.2)).score(FLOOR)
        < FLOOR.poorly_read_threshold
    )
    assert all(
        v.passed for v in query_verdicts(FLOOR, between, [between.cosine], [0.0], has_terms=True)
    )
    poorly = replace(between, by_words=True)
    assert not any(
        v.passed for v in query_verdicts(FLOOR, poorly, [poorly.cosine], [0.0], has_terms=True)
    )
    worded = replace(poorly, words=FLOOR.words_alone)
    assert all(
        v.passed for v in query_verdicts(FLOOR, worded, [worded.cosine], [0.1], has_terms=True)
    )
