from __future__ import annotations

import numpy as np
import pytest

from memory.recall.lexical import LexicalIndex, stem, tokenize, word_forms


def test_stopwords_and_question_words_are_dropped() -> None:
    assert tokenize("What did you do with the car?") == ["car"]


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["painting", "painted", "paints", "paint"], "paint"),
        (["running", "runs"], "run"),
        (["love", "loved", "loving"], "lov"),
        (["families", "family"], "family"),
    ],
)
def test_stemmer_merges_inflections(words: list[str], expected: str) -> None:
    assert {stem(w) for w in words} == {expected}


@pytest.mark.parametrize(
    ("word", "others"),
    [
        ("booking", {"book", "books", "booked"}),
        ("book", {"books", "booked", "booking"}),
        ("families", {"family"}),
        ("family", {"families"}),
        ("run", {"running", "runs"}),
        ("loved", {"love", "loves", "loving"}),
        ("classes", {"class"}),
    ],
)
def test_word_forms_are_the_inflections_that_stem_alike(word: str, others: set[str]) -> None:
    forms = word_forms(word)
    assert forms[0] == word
    assert others <= set(forms)
    assert {stem(f) for f in forms} == {stem(word)}  # never a word the stemmer keeps apart
    assert "bookshelf" not in word_forms("book")  # forms, not every word with the prefix


def test_word_forms_of_words_the_stemmer_leaves_alone_are_the_word() -> None:
    for word in ("q3", "marmaladefox42", "café", "42"):
        assert word_forms(word) == [word]
    assert word_forms("Booked")[0] == "booked"  # lower-cased, as the stored words are


def test_stemmer_leaves_short_words_and_numbers_alone() -> None:
    assert stem("bus") == "bus"
    assert stem("glass") == "glass"
    assert tokenize("room 4417 in 2023") == ["room", "4417", "2023"]


def test_words_that_only_look_plural_keep_their_s() -> None:
    # "news" is not the plural of "new": the two must not match each other.
    assert stem("news") != stem("new")
    assert stem("goods") != stem("good") and stem("means") != stem("mean")
    assert stem("shoes") == stem("shoe") and stem("views") == stem("view")


def test_possessive_and_curly_text_are_normalised() -> None:
    assert tokenize("Caroline's dog") == [stem("caroline"), "dog"]
    assert tokenize("Caroline\u2019s dog") == tokenize("Caroline's dog")
    assert tokenize("ＡＢＣ") == ["abc"]  # full-width folded by NFKC


def test_chinese_becomes_bigrams_and_content_unigrams() -> None:
    tokens = tokenize("我上周去了北京")
    assert "上周" in tokens and "北京" in tokens
    assert "我" not in tokens and "了" not in tokens  # grammar characters are not unigrams
    assert "京" in tokens


def test_chinese_question_words_are_stopwords_as_english_ones_are() -> None:
    # "What", "where" and "who" are English stopwords; their Chinese counterparts are too,
    # and they cut the run as a space would: no bigram spans them.
    tokens = tokenize("我要搬到哪里？为什么？谁的车？")
    assert not {"哪里", "为什", "什么", "谁的", "谁", "什", "么", "哪", "为"} & set(tokens)
    assert "搬到" in tokens and "车" in tokens
    assert tokenize("什么") == []  # a query of question words alone matches nothing
    assert tokenize("我的猫叫什么名字") == tokenize("我的猫叫 名字")
    assert "叫什" not in tokenize("我的猫叫什么名字")
    long = "什么" * 50_000 + "猫"  # linear: 100,001 characters cut in one pass
    assert tokenize(long) == ["猫"]


def test_bm25_ranks_the_rare_term_and_saturates_repeats() -> None:
    index = LexicalIndex()
    docs = ["cat sat on the mat", "dog and cat", "zanzibar trip", "cat cat cat cat cat"]
    for slot, text in enumerate(docs):
        index.add(slot, tokenize(text))
    scores = index.scores(tokenize("zanzibar cat"), len(docs))
    assert int(np.argmax(scores)) == 2
    assert scores[3] < 2.5 * scores[1]  # five repeats are worth far less than five times one


def test_incremental_updates_equal_a_fresh_build() -> None:
    texts = ["alpha beta", "beta gamma", "gamma delta", "delta alpha beta"]
    live = LexicalIndex()
    for slot, text in enumerate(texts):
        live.add(slot, tokenize(text))
    live.discard(1)
    live.subtract(3, tokenize("alpha"))
    fresh = LexicalIndex()
    fresh.add(0, tokenize("alpha beta"))
    fresh.add(2, tokenize("gamma delta"))
    fresh.add(3, tokenize("delta beta"))
    query = tokenize("alpha beta gamma delta")
    assert np.allclose(live.scores(query, 4), fresh.scores(query, 4))
    assert len(live) == 3
    assert live.document_frequency("alpha") == 1


def test_query_weights_scale_terms_and_unknown_terms_score_zero() -> None:
    index = LexicalIndex()
    index.add(0, ["apple"])
    index.add(1, ["pear"])
    plain = index.scores(["apple", "pear"], 2)
    weighted = index.scores(["apple", "pear"], 2, [1.0, 0.5])
    assert weighted[0] == pytest.approx(plain[0])
    assert weighted[1] == pytest.approx(plain[1] / 2)
    assert not index.scores(["kiwi"], 2).any()


def test_a_very_large_users_query_words_become_their_forms_within_the_term_cap() -> None:
    from memory.recall.recaller import _lexical_terms
    from memory.storage.store import MAX_LEXICAL_TERMS

    words, _ = _lexical_terms("Did I book the Lisbon trip? book it again", exact=True)
    assert {"book", "books", "booked", "booking"} <= set(words[0].split("|"))
    assert [w.split("|")[0] for w in words] == ["book", "lisbon", "trip"]  # repeats once
    pasted = " ".join(f"item{i}" for i in range(5000))
    assert len(_lexical_terms(pasted, exact=True)[0]) == MAX_LEXICAL_TERMS
