"""A message that asks two things: split into its questions, each answer ranked on its own.

The splitting rules as a function, and the ranking with the real all-MiniLM-L6-v2 model: one
embedding of "what is my cat called, and when is the heating repaired?" sits between the two
answers, and the memories about the cat (several, sharing the query's words) push the
plumber's visit down; ranked clause by clause, both answers lead.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from memory.recall.clauses import MAX_CLAUSES, split_clauses
from memory.recall.ranking import RankingWeights
from memory.recall.retrieval import Clause, UserIndex
from memory.storage.embedding import Embedder, get_embedder
from tests.unit._index_helpers import NOW, embedded_index
from tests.unit.test_dense_trust import ENGLISH

# With ENGLISH's "I have a ginger cat called Mochi; she is three."
CAT = [
    "Mochi sleeps on the radiator all afternoon.",
    "Mochi only eats the salmon kibble from the pet shop.",
    "Mochi scratched the new sofa again, my cat is a menace.",
    "We adopted the cat from the shelter two years ago.",
    "The cat's litter box lives in the bathroom.",
    "My cat hates the vacuum cleaner.",
]
PLUMBER = "The plumber comes on Thursday at eight to fix the boiler."
TEXTS = [*ENGLISH, *CAT, PLUMBER]
NAME_ID = f"m{TEXTS.index('I have a ginger cat called Mochi; she is three.')}"
FOOD_ID = f"m{TEXTS.index(CAT[1])}"
PLUMBER_ID = f"m{TEXTS.index(PLUMBER)}"


@pytest.mark.parametrize(
    ("query", "clauses"),
    [
        (
            "Which days can I cook and what appliance could save me time?",
            ["Which days can I cook", "what appliance could save me time?"],
        ),
        (
            "What does my grandfather enjoy, and how much can we spend?",
            ["What does my grandfather enjoy", "how much can we spend?"],
        ),
        (
            "Hi! What's the dog's name? And when is the vet appointment?",
            ["Hi! What's the dog's name?", "when is the vet appointment?"],
        ),
        (
            "Where is the wedding?\n\n   When   does the train leave?",
            ["Where is the wedding?", "When does the train leave?"],
        ),
        ("我女儿多大了？我在准备什么考试？", ["我女儿多大了？", "我在准备什么考试？"]),
        ("我开什么车，还有我早上有什么运动习惯？", ["我开什么车", "我早上有什么运动习惯？"]),
    ],
)
def test_a_query_that_joins_questions_is_split_into_them(query: str, clauses: list[str]) -> None:
    assert split_clauses(query) == clauses


@pytest.mark.parametrize(
    "query",
    [
        "What is the capital of Australia?",
        "Where and when is the wedding?",  # one question: "Where" has no content of its own
        "Tom and Jerry: what did they do?",  # "and" between names
        "What did I buy, salt and pepper?",
        "What's the deadline? I forgot.",  # the remark belongs to the question
        "Why does https://example.com/page?id=3 fail for what users?",  # a "?" in a link
        "Which test was flaky and what caused it?",  # "it" is the test
        "Who is my dentist, and where does she work?",
        "谁说我的照片拍得太暗，他在哪里上课？",
        "",
        "   ",
        "? ? ?",
    ],
)
def test_a_query_that_asks_one_thing_is_not_split(query: str) -> None:
    assert split_clauses(query) == []


def test_a_long_list_of_questions_keeps_its_tail_together() -> None:
    query = "Where is the wedding? Who cooks dinner? What train do we take? Which hotel is it?"
    parts = split_clauses(query)
    assert len(parts) == MAX_CLAUSES
    assert parts[-1] == "What train do we take? Which hotel is it?"


@pytest.mark.parametrize(
    "shape", [" and" * 8000, " " * 32000 + "and what", "?" * 32000, "a, " * 10000, "，还有" * 8000]
)
def test_hostile_queries_split_in_linear_time(shape: str) -> None:
    started = time.perf_counter()
    split_clauses(shape)
    split_clauses("What is it? " + shape)
    assert time.perf_counter() - started < 0.5


@pytest.fixture(scope="module")
def embedder(embedding_model_dir: Path) -> Embedder:
    return get_embedder("local:all-MiniLM-L6-v2", embedding_model_dir)


@pytest.fixture(scope="module")
def index(embedder: Embedder) -> UserIndex:
    return embedded_index(embedder, TEXTS)


def _ranked(index: UserIndex, embedder: Embedder, query: str, *, split: bool) -> list[str]:
    parts = split_clauses(query) if split else []
    vectors = embedder.embed([query, *parts])
    clauses = [Clause(t, v) for t, v in zip(parts, vectors[1:], strict=True)]
    found = index.search(
        query, vectors[0], k=len(TEXTS), now=NOW, weights=RankingWeights(), clauses=clauses
    )
    return [memory_id for memory_id, _ in found]


@pytest.mark.parametrize(
    ("query", "answers"),
    [
        ("What is my cat's name? When will the heating be repaired?", {NAME_ID, PLUMBER_ID}),
        ("Tell me what my cat eats and when the heating gets repaired?", {FOOD_ID, PLUMBER_ID}),
    ],
)
def test_each_question_finds_its_own_answer(
    index: UserIndex, embedder: Embedder, query: str, answers: set[str]
) -> None:
    whole = _ranked(index, embedder, query, split=False)
    split = _ranked(index, embedder, query, split=True)
    # One embedding of both questions: the cat's memories crowd the top, the plumber is
    # further down (or the answer about the cat is).
    assert not answers <= set(whole[:3])
    assert answers <= set(split[:3])


def test_a_when_clause_does_not_crowd_out_the_other_answer(
    index: UserIndex, embedder: Embedder
) -> None:
    """The "when" clause adds a time bonus to every memory naming a time: scaled, not on top."""
    query = "What is my cat's name? When will the heating be repaired?"
    split = _ranked(index, embedder, query, split=True)
    timed = f"m{TEXTS.index(CAT[0])}"  # "all afternoon": a time, nothing to do with either
    assert split.index(NAME_ID) < split.index(timed)


def test_each_answer_names_the_question_that_scored_it(
    index: UserIndex, embedder: Embedder
) -> None:
    query = "What is my cat's name? When will the heating be repaired?"
    parts = split_clauses(query)
    vectors = embedder.embed([query, *parts])
    clauses = [Clause(t, v) for t, v in zip(parts, vectors[1:], strict=True)]
    found = dict(
        index.search(query, vectors[0], k=3, now=NOW, weights=RankingWeights(), clauses=clauses)
    )
    assert found[PLUMBER_ID].question == "When will the heating be repaired?"
    assert {b.question for b in found.values()} <= {None, *parts}
    # Ranked whole, nothing names a question.
    alone = index.search(query, vectors[0], k=3, now=NOW, weights=RankingWeights())
    assert all(b.question is None for _, b in alone)


def test_a_single_question_ranks_exactly_as_before(index: UserIndex, embedder: Embedder) -> None:
    query = "What does my cat eat?"
    assert split_clauses(query) == []
    assert _ranked(index, embedder, query, split=True) == _ranked(
        index, embedder, query, split=False
    )


def _judged(
    index: UserIndex, embedder: Embedder, query: str, *, split: bool
) -> list[tuple[str, bool, str]]:
    parts = split_clauses(query) if split else []
    vectors = embedder.embed([query, *parts])
    clauses = [Clause(t, v) for t, v in zip(parts, vectors[1:], strict=True)]
    found = index.search(query, vectors[0], k=3, now=NOW, weights=RankingWeights(), clauses=clauses)
    return [
        (mid, b.relevance.passed, b.relevance.reason) for mid, b in found if b.relevance is not None
    ]


def test_a_question_the_user_told_passes_the_floor_beside_one_they_did_not(
    index: UserIndex, embedder: Embedder
) -> None:
    """Judged whole, the world-knowledge half drags the message below the floor."""
    query = "Who painted the Mona Lisa? And what am I allergic to?"
    peanuts = f"m{TEXTS.index('I am allergic to peanuts, so I have to be careful with food.')}"
    assert not any(passed for _, passed, _ in _judged(index, embedder, query, split=False))
    judged = _judged(index, embedder, query, split=True)
    assert judged[0][0] == peanuts and judged[0][1]
    assert "question 'what am I allergic to?'" in judged[0][2]


def test_questions_about_nothing_the_user_told_pass_nothing(
    index: UserIndex, embedder: Embedder
) -> None:
    query = "Who painted the Mona Lisa? And how many bones are in the adult human body?"
    assert len(split_clauses(query)) == 2
    assert not any(passed for _, passed, _ in _judged(index, embedder, query, split=True))
