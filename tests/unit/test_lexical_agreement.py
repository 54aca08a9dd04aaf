"""The lexical leg's agreement test: a word match the embedding finds unrelated counts less.

A long reply that repeats the query's words in another sense ("island" and "ferry" in a
genetic algorithm) must not outrank the one-line fact that answers the question in other
words, when the embedding clearly finds that fact. Tested as a function and with the real
all-MiniLM-L6-v2 model.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from memory.recall.ranking import RankingWeights
from memory.recall.retrieval import UserIndex
from memory.recall.retrieval_signals import lexical_agreement
from memory.storage.embedding import Embedder, get_embedder
from tests.support.chinese_memories import CHINESE
from tests.unit._index_helpers import NOW, embedded_index
from tests.unit.test_dense_trust import ENGLISH

W = RankingWeights()
OFF = replace(W, lexical_agreement_high=0.0)

MORE = [
    "The dentist moved my check-up to the second week of March.",
    "We are repainting the bedroom a pale green this spring.",
    "My manager wants the quarterly report by Friday noon.",
    "I switched my phone plan to one with more data for travel.",
    "Our neighbours lent us their ladder for the gutters.",
    "I am reading a long biography of a nineteenth-century engineer.",
    "The car needs new winter tyres before December.",
    "I signed up for a Spanish evening class on Tuesdays.",
]
# Shares "island", "ferry", "leave" and "time" with the questions below, in another sense.
ISLANDS = (
    "In the island model of a genetic algorithm each island evolves its own population. Leave "
    "enough time between migrations, and ferry the best individuals from island to island "
    "every few generations, so that no island leaves the others far behind."
)
REVIEW = (
    "A good code review leaves time for the author to answer: comment on the design first, "
    "then the details, and leave style to the linter."
)
# Answers them, sharing none of their words.
BOAT = "The boat to Vlieland departs from Harlingen at 9:05 every morning."
TEXTS = [*ENGLISH, *MORE, ISLANDS, REVIEW, BOAT]
ISLANDS_ID, BOAT_ID = f"m{TEXTS.index(ISLANDS)}", f"m{TEXTS.index(BOAT)}"


@pytest.fixture(scope="module")
def embedder(embedding_model_dir: Path) -> Embedder:
    return get_embedder("local:all-MiniLM-L6-v2", embedding_model_dir)


def _ranked(
    index: UserIndex, embedder: Embedder, query: str, weights: RankingWeights
) -> list[tuple[str, float]]:
    vector = embedder.embed([query])[0]
    found = index.search(query, vector, k=5, now=NOW, weights=weights)
    return [(mid, b.lexical) for mid, b in found]


def test_the_factor_ramps_with_how_plausible_the_best_word_match_is() -> None:
    spread = (0.1, 0.1)
    lexical = np.array([0.0, 1.0, 0.4], dtype=np.float32)  # slot 1 is the best word match
    w = replace(W, lexical_agreement_low=1.0, lexical_agreement_high=3.0)
    w = replace(w, lexical_agreement_floor=0.4, lexical_agreement_trust=0.8)

    def factor(best_cosine: float, trust: float = 1.0, weights: RankingWeights = w) -> float:
        sims = np.array([0.9, best_cosine, 0.5], dtype=np.float32)
        return lexical_agreement(lexical, sims, spread, trust, weights)

    assert factor(0.15) == pytest.approx(0.4)  # z = 0.5: as far as a random memory
    assert factor(0.3) == pytest.approx(0.7)  # z = 2: half way up the ramp
    assert factor(0.45) == 1.0  # z = 3.5: the embedding agrees
    # The test comes in with the dense leg's trust: none up to 0.8, half of the cut at 0.9.
    assert factor(0.15, trust=0.8) == 1.0
    assert factor(0.15, trust=0.9) == pytest.approx(0.7)
    step = replace(w, lexical_agreement_trust=1.0)  # a step at full trust
    assert factor(0.15, trust=0.99, weights=step) == 1.0
    assert factor(0.15, weights=step) == pytest.approx(0.4)
    assert factor(0.15, weights=replace(w, lexical_agreement_high=0.0)) == 1.0  # off
    nothing = np.zeros(3, dtype=np.float32)
    sims = np.full(3, 0.1, dtype=np.float32)
    assert lexical_agreement(nothing, sims, spread, 1.0, w) == 1.0  # no word matched
    assert lexical_agreement(lexical, sims, (0.1, 0.0), 1.0, w) == pytest.approx(0.4)  # no spread


@pytest.mark.parametrize(
    "query",
    ["What time does the ferry to the island leave?", "When does the ferry to the island leave?"],
)
def test_a_fact_in_other_words_outranks_a_reply_that_repeats_the_query_words(
    embedder: Embedder, query: str
) -> None:
    index = embedded_index(embedder, TEXTS)
    without = _ranked(index, embedder, query, OFF)
    assert without[0][0] == ISLANDS_ID  # the word match wins on its words alone
    ranked = _ranked(index, embedder, query, W)
    assert [mid for mid, _ in ranked[:2]] == [BOAT_ID, ISLANDS_ID]
    lexical_off, lexical_on = dict(without)[ISLANDS_ID], dict(ranked)[ISLANDS_ID]
    assert W.lexical_agreement_floor * lexical_off <= lexical_on < 0.8 * lexical_off


def test_a_word_match_the_embedding_agrees_with_keeps_its_weight(embedder: Embedder) -> None:
    index = embedded_index(embedder, TEXTS)
    for query in ("Which food am I allergic to?", "What do I drink in the morning?"):
        assert _ranked(index, embedder, query, W) == _ranked(index, embedder, query, OFF)


def test_chinese_word_matches_are_never_vetoed_by_the_english_model(embedder: Embedder) -> None:
    # The English model bunches Chinese sentences, so the dense leg is trusted too little for
    # the test to apply and the words keep deciding (the leg's whole weight).
    index = embedded_index(embedder, CHINESE)
    for query in ("我做后端吗？", "我的猫叫什么名字？"):
        assert _ranked(index, embedder, query, W) == _ranked(index, embedder, query, OFF)


def test_a_large_users_candidates_are_ranked_without_the_test(embedder: Embedder) -> None:
    # L2 ranks a large user's candidates with the spread measured over all their memories
    # (`spread`); the test needs the whole history's best word match, so it stays out there.
    index = embedded_index(embedder, TEXTS)
    query = "What time does the ferry to the island leave?"
    vector = embedder.embed([query])[0]
    sims = embedder.embed(TEXTS) @ vector
    spread = (float(sims.mean()), float(sims.std()))

    def ranked(weights: RankingWeights) -> list[tuple[str, float]]:
        found = index.search(query, vector, k=5, now=NOW, weights=weights, spread=spread)
        return [(mid, b.total) for mid, b in found]

    assert ranked(W) == ranked(OFF)
    assert ranked(W)[0][0] == ISLANDS_ID
