"""The relevance floor's pieces: content terms, word share, the verdict and its second pass."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.recall.relevance import (
    RelevanceFloor,
    content_terms,
    judge,
    second_pass,
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
