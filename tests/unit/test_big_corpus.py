"""The large-history corpus of `bench.big_user --corpus sentences`."""

from __future__ import annotations

from bench._big_corpus import sentences


def test_sentences_are_distinct_and_the_same_for_a_seed() -> None:
    first = sentences(20_000)
    assert len(first) == len(set(first)) == 20_000
    assert sentences(500) == first[:500]  # a prefix: a smaller load is the same user's start
    assert sentences(500, seed=12) != first[:500]
    assert all(s[0].isupper() and s.endswith(".") and "  " not in s for s in first)
