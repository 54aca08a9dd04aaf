"""The floor's fitting script: a reported-only row never moves the fit or the threshold."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from bench.relevance_floor import (
    GENERAL_QUESTIONS,
    HISTORY_NEGATIVES,
    Sample,
    choose,
    fit,
    table,
)
from memory.recall.relevance import QueryEvidence, RelevanceFloor


def _sample(dataset: str, cosine: float, *, on_topic: bool, fitted: bool = True) -> Sample:
    evidence = QueryEvidence(
        cosine=cosine, z=2.0, words=0.5, coverage=0.5, unseen_name=False, gap=0.1
    )
    return Sample(
        dataset=dataset,
        evidence=evidence,
        cosines=np.array([cosine, cosine - 0.1], dtype=np.float32),
        gold=np.array([1 if on_topic else 0, 0], dtype=np.int32),
        n_gold=1,
        has_terms=True,
        on_topic=on_topic,
        fitted=fitted,
    )


def _quiet(dataset: str, *, fitted: bool = True) -> list[Sample]:
    """A chit-chat and a general question, so every kind has a rate (as in a real run)."""
    chat = replace(_sample(dataset, 0.2, on_topic=False, fitted=fitted), has_terms=False)
    chat.chitchat = True
    general = _sample(dataset, 0.1, on_topic=False, fitted=fitted)
    general.general = True
    return [chat, general]


def _samples() -> list[Sample]:
    out = []
    for name in ("a", "b"):
        out += [_sample(name, 0.55 + 0.02 * i, on_topic=True) for i in range(5)]
        out += [_sample(name, 0.15 + 0.02 * i, on_topic=False) for i in range(10)]
        out += _quiet(name)
    return out


def test_a_reported_only_set_changes_neither_weights_nor_threshold_but_is_reported() -> None:
    base = _samples()
    weights = fit(base)
    threshold = choose(base, weights, 0.10)
    # A history whose off-topic queries look exactly like the others' on-topic ones: fitted
    # on, it would drag the weights and force a stricter threshold.
    history = [_sample("long", 0.6, on_topic=True, fitted=False) for _ in range(3)]
    history += [_sample("long", 0.6, on_topic=False, fitted=False) for _ in range(30)]
    history += _quiet("long", fitted=False)
    assert fit(base + history) == weights
    assert choose(base + history, weights, 0.10) == threshold
    floor = replace(RelevanceFloor(), evidence=weights, threshold=threshold)
    rows = table(base + history, floor)
    assert set(rows) == {"a", "b", "long"}
    assert rows["long"][2] == 1.0  # every one of its off-topic queries passes, and it shows
    # Fitted on, the same history does move them.
    fitted = [replace(s, fitted=True) for s in history]
    assert fit(base + fitted) != weights


def test_the_history_negatives_are_not_the_reported_general_questions() -> None:
    assert not set(HISTORY_NEGATIVES) & set(GENERAL_QUESTIONS)
    assert len(set(HISTORY_NEGATIVES)) == len(HISTORY_NEGATIVES) >= 20


def test_every_set_weighs_the_same_in_the_fit() -> None:
    # Repeating one set's samples tenfold (a set with ten times the queries) leaves the fit
    # as it was: a large set of long real chats gets one vote, as a small generated set does.
    base = _samples()
    bigger = base + [replace(s) for s in base if s.dataset == "a" for _ in range(9)]
    assert fit(bigger) == fit(base)


def test_next_conversation_questions_are_their_own_rate_and_feed_the_benchmark_rate() -> None:
    base = _samples()
    within = [replace(_sample("a", 0.9, on_topic=False), within=True) for _ in range(2)]
    floor = replace(RelevanceFloor(), evidence=fit(base), threshold=0.5)
    row = table(base + within, floor)["a"]
    assert row[5] == 1.0  # both next-conversation questions inject
    assert 0.0 < row[6] < 1.0  # pooled with chit-chat, as bench.locomo reports it
    assert row[2] == table(base, floor)["a"][2]  # the foreign rate is unchanged
