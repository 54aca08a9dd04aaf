"""The dense leg's per-query trust: how far its best cosine stands out of the user's spread.

The ramp is tested as a function; the ranking effect with the real all-MiniLM-L6-v2 model,
which is English-only: on Chinese text its cosines bunch (every Chinese sentence is ~0.5 from
every other), so the best "match" barely stands out and the word leg must decide.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from memory.recall.ranking import RankingWeights
from memory.recall.retrieval import UserIndex
from memory.recall.retrieval_signals import dense_trust
from memory.storage.embedding import Embedder, get_embedder
from tests.support.chinese_memories import CHINESE
from tests.unit._index_helpers import NOW, embedded_index

# The dense leg alone: the fallback between legs (`fall_back`) would rescale it per query.
W = RankingWeights(fallback=0.0)
OFF = replace(W, dense_trust_high=0.0)

ENGLISH = [
    "I work as a backend engineer at a logistics software company, mostly in Go.",
    "Any ideas for a weekend park trip with the kids?",
    "What is a healthy dinner?",
    "I have a ginger cat called Mochi; she is three.",
    "Recommend a few books for the commute.",
    "I am allergic to peanuts, so I have to be careful with food.",
    "How do I avoid getting tired on a long drive?",
    "My sister is getting married in Hangzhou next May.",
    "My knee hurts a bit after running, what should I do?",
    "I have been learning pottery lately, every Saturday.",
    "It is getting cold, wear more layers when going out.",
    "I drink an americano every morning.",
]


@pytest.fixture(scope="module")
def embedder(embedding_model_dir: Path) -> Embedder:
    return get_embedder("local:all-MiniLM-L6-v2", embedding_model_dir)


def _search(
    index: UserIndex, embedder: Embedder, query: str, weights: RankingWeights
) -> list[tuple[str, float, float]]:
    vector = embedder.embed([query])[0]
    found = index.search(query, vector, k=5, now=NOW, weights=weights)
    return [(mid, b.similarity, b.total) for mid, b in found]


def test_the_trust_ramps_from_low_to_high_standard_deviations() -> None:
    spread = (0.1, 0.1)
    assert dense_trust(0.2, spread, 1.0, 2.5) == 0.0  # z = 1: no weight
    assert dense_trust(0.275, spread, 1.0, 2.5) == pytest.approx(0.5)  # z = 1.75: half
    assert dense_trust(0.6, spread, 1.0, 2.5) == 1.0  # z = 5: full
    assert dense_trust(0.2, spread, 0.0, 0.0) == 1.0  # switched off: always full
    assert dense_trust(0.9, (0.5, 0.0), 1.0, 2.5) == 0.0  # no spread: nothing stands out
    assert dense_trust(0.36, spread, 2.5, 2.5) == 1.0  # a step at 2.5
    assert dense_trust(0.30, spread, 2.5, 2.5) == 0.0


def test_a_chinese_query_the_words_answer_keeps_its_answer_first(embedder: Embedder) -> None:
    index = embedded_index(embedder, CHINESE)
    query = "我的猫叫什么名字？"
    trusted = _search(index, embedder, query, W)
    assert trusted[0][0] == "m3"  # "我养了一只橘猫，叫年糕"
    # The dense leg barely separates Chinese sentences, so it is given less than its weight.
    assert max(sim for _, sim, _ in trusted) < W.alpha
    full = _search(index, embedder, query, OFF)
    assert max(sim for _, sim, _ in full) == pytest.approx(W.alpha)


def test_chinese_dense_noise_no_longer_outranks_the_word_match(embedder: Embedder) -> None:
    index = embedded_index(embedder, CHINESE)
    query = "我做后端吗？"  # "am I on the backend?": only m0 says "后端"
    trusted = [mid for mid, _, _ in _search(index, embedder, query, W)]
    assert trusted[0] == "m0"
    # At full dense weight a sentence the model merely finds close (it is no closer in
    # meaning) outranks the one memory that shares the query's word.
    full = [mid for mid, _, _ in _search(index, embedder, query, OFF)]
    assert full[0] != "m0" and "m0" in full


def test_an_english_query_the_model_understands_is_ranked_as_before(embedder: Embedder) -> None:
    index = embedded_index(embedder, ENGLISH)
    # The answer stands > 3 standard deviations out: full trust, the same order and scores.
    for query in ("What is my cat called?", "When is my pottery class?"):
        trusted = _search(index, embedder, query, W)
        assert trusted == _search(index, embedder, query, OFF)
        assert np.isclose(max(sim for _, sim, _ in trusted), W.alpha)
    assert _search(index, embedder, "What is my cat called?", W)[0][0] == "m3"
    # Nearly as far out (2.85 in 12 memories): a little less weight, the same answer first.
    query = "Which food am I allergic to?"
    trusted = _search(index, embedder, query, W)
    assert trusted[0][0] == _search(index, embedder, query, OFF)[0][0] == "m5"
