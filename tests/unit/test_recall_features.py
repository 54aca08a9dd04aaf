"""Stored recall features: exact round trip, invalidated by any change of their text."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import numpy as np
import pytest

from memory.recall.features import compute_features, decode, encode, features_key
from memory.recall.lexical import LexicalIndex, tokenize

AT = datetime(2025, 5, 8, 14, 30, 12, 345678, tzinfo=UTC)
TEXT = "Mia: we moved to Lisbon last week and I start the new job on 3 June; 上周我们搬家了"


def test_round_trip_is_exact() -> None:
    features = compute_features(TEXT, TEXT.removeprefix("Mia: "), "the context words", AT)
    assert len(features.events) > 1 and features.dated  # the day itself plus named times
    key = features_key(TEXT, "the context words", AT)
    assert decode(encode(features, key), key) == features
    assert decode(encode(features, key).encode(), key) == features  # bytes, as a driver may
    assert not features.chatter
    thanks = compute_features("Mia: ok, thanks!", "ok, thanks!", "", AT)
    assert thanks.chatter  # greetings and thanks: ranked down, known without re-reading them
    key = features_key("Mia: ok, thanks!", "", AT)
    assert decode(encode(thanks, key), key) == thanks


@pytest.mark.parametrize(
    "change",
    [
        (TEXT + "!", "ctx", AT),
        (TEXT, "ctx!", AT),
        (TEXT, "ctx", AT.replace(microsecond=0)),
    ],
)
def test_any_change_of_what_they_depend_on_invalidates_them(
    change: tuple[str, str, datetime],
) -> None:
    key = features_key(TEXT, "ctx", AT)
    stored = encode(compute_features(TEXT, TEXT, "ctx", AT), key)
    assert decode(stored, features_key(*change)) is None


@pytest.mark.parametrize(
    "stored",
    [
        "not json",
        "[]",
        '{"k": "KEY"}',
        '{"k": "KEY", "t": [1, 2], "c": [], "e": [], "d": false}',
        '{"k": "KEY", "t": [], "c": [], "e": [["x", 1]], "d": false}',
        '{"k": "KEY", "t": [], "c": [], "e": [[1e300, 1]], "d": false}',
        '{"k": "KEY", "t": [], "c": [], "e": [[1]], "d": false}',
        '{"k": "KEY", "t": [], "c": [], "e": [], "d": false}',  # no `chatter`: recomputed
    ],
)
def test_damaged_values_are_recomputed_not_trusted(stored: str) -> None:
    assert decode(stored, "KEY") is None


def test_new_document_fast_path_scores_like_incremental_updates() -> None:
    docs = [tokenize(t) for t in (TEXT, "Lisbon trip booked", "new job in June", "上周搬家")]
    fresh, edited = LexicalIndex(), LexicalIndex()
    for slot, tokens in enumerate(docs):
        fresh.add(slot, tokens)  # new slots: the fast path
        edited.add(slot, ["placeholder"])
        edited.add(slot, tokens)  # an existing slot: the general path
        edited.subtract(slot, ["placeholder"])
    query = tokenize("when did we move to Lisbon for the job 搬家")
    np.testing.assert_allclose(fresh.scores(query, 4), edited.scores(query, 4), rtol=1e-6)
    assert [fresh.terms(s) for s in range(4)] == [Counter(d) for d in docs]
    assert fresh.idfs(query) == edited.idfs(query)
