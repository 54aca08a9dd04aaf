"""Fusion falls back toward the more confident leg when the dense and lexical legs disagree."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from memory.recall.ranking import RankingWeights
from memory.recall.retrieval_signals import fall_back, leg_confidence

LIVE = np.ones(20, dtype=np.bool_)
NO_GROUPS = np.full(20, -1, dtype=np.int32)


def _peaked(at: int) -> np.ndarray:
    values = np.full(20, 0.1, dtype=np.float32)
    values[at] = 1.0
    return values


def _flat(seed: int) -> np.ndarray:
    return (0.9 + 0.1 * np.random.default_rng(seed).random(20)).astype(np.float32)


def test_confidence_is_high_for_one_standout_and_low_for_a_flat_leg() -> None:
    assert leg_confidence(_peaked(3), LIVE, NO_GROUPS, 10) > 0.85
    assert leg_confidence(_flat(1), LIVE, NO_GROUPS, 10) < 0.1
    assert leg_confidence(np.zeros(20, dtype=np.float32), LIVE, NO_GROUPS, 10) == 0.0


def test_neighbouring_turns_of_one_session_do_not_make_a_leg_look_flat() -> None:
    values = _peaked(3)
    values[4] = values[5] = 0.98  # the standout's neighbours, embedded with its context
    groups = NO_GROUPS.copy()
    groups[3:6] = 1
    assert leg_confidence(values, LIVE, groups, 10) > 0.85
    assert leg_confidence(values, LIVE, NO_GROUPS, 3) < 0.1


def test_a_flat_leg_gives_way_to_a_confident_one() -> None:
    weights = replace(RankingWeights(), fallback=1.0)
    dense, words = _flat(2), 0.1 * _peaked(7)
    assert int(np.argmax(dense + words)) != 7  # summed, the flat leg decides
    new_dense, new_words = fall_back(dense, words, LIVE, NO_GROUPS, weights)
    assert np.array_equal(new_words, words)  # the confident leg keeps its weight
    assert float(new_dense.max()) < 0.15 * float(dense.max())
    assert int(np.argmax(new_dense + new_words)) == 7
    # Off, or with two equally confident legs, nothing changes.
    off = fall_back(dense, words, LIVE, NO_GROUPS, replace(weights, fallback=0.0))
    assert np.array_equal(off[0], dense)
    same = fall_back(_peaked(1), _peaked(2), LIVE, NO_GROUPS, weights)
    assert np.array_equal(same[0], _peaked(1)) and np.array_equal(same[1], _peaked(2))
