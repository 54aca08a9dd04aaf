"""The entity second hop: names in the first hop's best memories pull in what they link to."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from memory.recall.lexical import name_terms
from memory.recall.ranking import RankingWeights
from memory.recall.retrieval import UserIndex
from tests.unit._index_helpers import NOW, filler, memory, unit

ON = replace(RankingWeights(), hop=1.0)
OFF = replace(ON, hop=0.0)
QUERY = "which city does the friend who gave me the oboe live in"


def _ranked(index: UserIndex, weights: RankingWeights, vector: np.ndarray) -> list[str]:
    return [m for m, _ in index.search(QUERY, vector, k=10, now=NOW, weights=weights)]


def test_name_terms_are_mid_sentence_capitals_numbers_and_chinese() -> None:
    assert name_terms("My friend Ilse moved to Ghent in 2024.") == {"ils", "ghent", "2024"}
    # Sentence-initial capitals are ordinary words in English prose.
    assert name_terms("Good gifts are personal. Plans work best when written down.") == set()
    assert {"阿杰", "厦门"} <= name_terms("阿杰现在在厦门开了一家咖啡馆。")
    assert all(len(t) > 1 for t in name_terms("阿杰现在在厦门开了一家咖啡馆。"))
    assert name_terms("") == set()


def test_name_terms_handles_a_long_hostile_text() -> None:
    # One pass over the tokens: a megabyte of sentence breaks and capitals is no problem.
    text = "A. B! Cc? " * 100_000 + "then Zed"
    assert name_terms(text) == {"zed"}


def _index() -> tuple[UserIndex, np.ndarray]:
    seed_vector = unit(7)
    index = UserIndex()
    index.upsert([
        *filler(60),
        memory("seed", "user: my friend Ilse gave me her old oboe", vector=seed_vector),
        memory("linked", "user: Ilse moved to Ghent for a job at the hospital", vector=unit(8)),
    ])  # fmt: skip
    return index, seed_vector


def test_the_second_hop_brings_in_the_memory_the_first_one_names() -> None:
    index, vector = _index()
    off, on = _ranked(index, OFF, vector), _ranked(index, ON, vector)
    assert off[0] == "seed" and "linked" not in off[:5]
    assert set(on[:2]) == {"seed", "linked"}  # hop 1: level with the seed's relevance
    below = _ranked(index, replace(ON, hop=0.9), vector)
    assert below[:2] == ["seed", "linked"]  # hop < 1: right after the seed, never above it
    found = dict(index.search(QUERY, vector, k=2, now=NOW, weights=ON))
    assert found["linked"].lexical > 0.0  # the rise shows in the breakdown's lexical term


def test_ordinary_rare_words_do_not_link() -> None:
    index = UserIndex()
    index.upsert([
        *filler(60),
        memory("seed", "user: my friend gave me her old oboe and a metronome", vector=unit(7)),
        memory("other", "user: the metronome battery died again", vector=unit(8)),
    ])  # fmt: skip
    assert "other" not in _ranked(index, ON, unit(7))[:5]


def test_the_default_second_hop_lifts_a_linked_memory_into_the_top_five() -> None:
    index, vector = _index()
    default = _ranked(index, RankingWeights(), vector)
    assert default[0] == "seed" and "linked" in default[:5]


def test_a_name_every_memory_shares_links_nothing() -> None:
    index = UserIndex()
    index.upsert([
        *[memory(f"n{i}", f"user: notes about Ilse and item {i}", vector=unit(100 + i))
          for i in range(60)],
        memory("seed", "user: my friend Ilse gave me her old oboe", vector=unit(7)),
    ])  # fmt: skip
    assert _ranked(index, ON, unit(7)) == _ranked(index, OFF, unit(7))
