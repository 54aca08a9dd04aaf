"""The relevance floor on the real store: unrelated queries get nothing, related ones a memory."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memory.recall.ranking import RankingWeights
from memory.recall.relevance import RelevanceFloor
from memory.storage.store import MemoryStore, open_store
from memory.system import recaller
from memory.types import NewMemory, Scope
from tests.support.memory_stores import store_settings, truncate

SMALL = Scope("acme", "small-user")
MEMORIES = [
    "I prefer tabs for indentation in my own repositories.",
    "My sister's wedding is in Lisbon next June.",
    "I have a peanut allergy.",
]
UNRELATED = [
    "What is the capital of Australia?",
    "How do I reverse a linked list?",
    "Who won the 1998 World Cup?",
    "Explain how photosynthesis works.",
    "What's the weather like on Mars?",
    "hi",
    "thanks!",
    "ok, bye",
    "你好",
]
RELATED = [
    ("Do I have any food allergies?", 2),
    ("Where is my sister getting married?", 1),
    ("tabs or spaces for my code?", 0),
]


@pytest.fixture
async def store(
    pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path
) -> AsyncIterator[MemoryStore]:
    async with open_store(store_settings(pg_db_url, tmp_data_dir, embedding_model_dir)) as s:
        await truncate(s)
        await s.write_many(SMALL, [NewMemory(content=m) for m in MEMORIES])
        yield s


@pytest.mark.parametrize("query", UNRELATED)
async def test_an_unrelated_query_returns_nothing(store: MemoryStore, query: str) -> None:
    assert await recaller(store).recall(SMALL, query, k=5) == []
    turn = await recaller(store).recall_turn(SMALL, query, k=5, weights=RankingWeights())
    assert turn.hits == []


@pytest.mark.parametrize(("query", "which"), RELATED)
async def test_a_related_query_returns_the_memory(
    store: MemoryStore, query: str, which: int
) -> None:
    hits = await recaller(store).recall(SMALL, query, k=5)
    assert hits, query
    assert hits[0].record.content == MEMORIES[which]
    assert all(h.breakdown.relevance and h.breakdown.relevance.passed for h in hits)


async def test_explain_mode_returns_failing_items_with_reasons(store: MemoryStore) -> None:
    hits = await recaller(store).recall(
        SMALL, "What is the capital of Australia?", k=5, relevant_only=False
    )
    assert len(hits) == 3
    for hit in hits:
        verdict = hit.breakdown.relevance
        assert verdict is not None and not verdict.passed
        assert "cosine" in verdict.reason


async def test_a_single_memory_user_is_judged_too(store: MemoryStore) -> None:
    one = Scope("acme", "one-memory")
    await store.write_many(one, [NewMemory(content="I have a peanut allergy.")])
    assert await recaller(store).recall(one, "What is the capital of Australia?", k=5) == []
    assert await recaller(store).recall(one, "Do I have any food allergies?", k=5)


async def test_the_floor_is_configurable(store: MemoryStore) -> None:
    lenient = RankingWeights(floor=RelevanceFloor(cosine=-1.0))
    hits = await recaller(store).recall(
        SMALL, "What is the capital of Australia?", k=5, weights=lenient
    )
    assert len(hits) == 3
    with pytest.raises(ValueError, match="finite"):
        RelevanceFloor(cosine=float("nan"))


@pytest.mark.parametrize(
    ("memory", "query"),
    [
        ("I prefer TypeScript.", "Which language do I prefer?"),
        ("I prefer tabs for indentation.", "tabs or spaces?"),
        ("My favourite editor is Neovim.", "Which editor do I like best?"),
    ],  # fmt: skip
)
async def test_ordinary_preference_questions_pass(
    store: MemoryStore, memory: str, query: str
) -> None:
    one = Scope("acme", "prefers-" + "".join(c for c in memory.lower() if c.isalpha())[:40])
    await store.write_many(one, [NewMemory(content=memory)])
    hits = await recaller(store).recall(one, query, k=5)
    assert [h.record.content for h in hits] == [memory]


async def test_explain_shows_the_query_evidence(store: MemoryStore) -> None:
    failing = await recaller(store).recall(
        SMALL, "Who won the 1998 World Cup?", k=5, relevant_only=False
    )
    passing = await recaller(store).recall(SMALL, "Do I have any food allergies?", k=5)
    for hit in failing + passing:
        verdict = hit.breakdown.relevance
        assert verdict is not None and verdict.evidence is not None
        assert "query evidence" in verdict.reason
    assert all(not h.breakdown.relevance.passed for h in failing if h.breakdown.relevance)


CHINESE_USER = Scope("acme", "small-zh-user")
CHINESE = ["我养了一只橘猫叫大福", "我在腾讯做后端开发", "我每天早上喝龙井"]
CHINESE_UNRELATED = ["明天北京天气怎么样", "推荐一部好看的电影", "怎么做红烧肉", "一升等于多少毫升"]


@pytest.fixture
async def chinese_store(store: MemoryStore) -> MemoryStore:
    await store.write_many(CHINESE_USER, [NewMemory(content=m) for m in CHINESE])
    return store


@pytest.mark.parametrize("query", CHINESE_UNRELATED)
async def test_a_new_chinese_user_gets_nothing_for_an_unrelated_question(
    chinese_store: MemoryStore, query: str
) -> None:
    """All-MiniLM puts any two Chinese texts near cosine 0.66: against the English background,
    every memory stood eight deviations out and went into every prompt."""
    assert await recaller(chinese_store).recall(CHINESE_USER, query, k=5) == []
    turn = await recaller(chinese_store).recall_turn(
        CHINESE_USER, query, k=5, weights=RankingWeights()
    )
    assert turn.hits == []  # the agent's turn takes the same judgement


async def test_a_new_chinese_user_is_answered_by_the_words_they_share(
    chinese_store: MemoryStore,
) -> None:
    hits = await recaller(chinese_store).recall(CHINESE_USER, "我在哪里上班？", k=5)
    assert [h.record.content for h in hits][:1] == ["我在腾讯做后端开发"]
    verdict = hits[0].breakdown.relevance
    assert verdict is not None and verdict.passed
