"""The model gate reads meaning too: quoted, bounded, validated memories; rules as fallback.

Fake chat models for the decision logic, and the local OpenAI-compatible stub server for the
real `ChatOpenAI` path (its JSON, its delays). No database is involved: the gate decides, the
write path (`ingest.write_back`) writes what it decides.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.outputs import ChatResult
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from memory.gating.gate import (
    MALFORMED,
    MAX_MODEL_MEMORIES,
    GatePolicy,
    gate_all_with_model,
    gate_with_model,
    parse_answer,
)
from memory.gating.gate_model import TIMED_OUT, quote_of
from memory.gating.ingest.write_back import _decide_all
from memory.gating.privacy import PrivacyFilter
from memory.types import Category, MemoryKind
from tests.support.stub_llm import StubLLM


def answer(memories: list[dict[str, Any]] | None = None, **overrides: Any) -> str:
    base: dict[str, Any] = {
        "keep": True,
        "category": "fact",
        "importance": 0.6,
        "confidence": 0.8,
        "origin": "explicit",
        "needs_approval": False,
        "instruction_like": False,
        "reason": "about the user",
        "memories": memories or [],
    }
    return json.dumps(base | overrides)


def memory(text: str, category: str = "fact", importance: float = 0.6) -> dict[str, Any]:
    return {"text": text, "category": category, "importance": importance}


class SlowModel(FakeListChatModel):
    """A chat model whose provider stalls."""

    async def _agenerate(self, *args: Any, **kwargs: Any) -> ChatResult:
        await asyncio.sleep(5)
        raise AssertionError("never reached")


async def test_a_question_the_model_calls_a_fact_is_not_stored() -> None:
    for text in ("what's my dog's name", "我的狗叫什么名字", "do you know where I parked"):
        model = FakeListChatModel(responses=[answer(importance=0.65)])
        decision = await gate_with_model(model, text)
        assert not decision.keep, text
        assert "a question or request, not a fact" in decision.reason


async def test_a_mixed_turn_keeps_the_fact_even_when_the_model_keeps_it_all() -> None:
    model = FakeListChatModel(responses=[answer(category="constraint", importance=0.85)])
    decision = await gate_with_model(model, "I'm allergic to peanuts, what snacks are safe?")
    assert decision.keep
    assert decision.content == "I'm allergic to peanuts"


async def test_memories_are_quoted_from_the_message_and_questions_among_them_refused() -> None:
    text = "i'm  allergic to peanuts and my sister Ana lives in Lisbon, what snacks are safe?"
    reply = answer(
        [
            memory("I'm allergic to peanuts", "allergy", 0.85),  # a synonym of constraint
            memory("my sister Ana lives in Lisbon."),
            memory("what snacks are safe?"),
        ]
    )
    decisions = await gate_all_with_model(FakeListChatModel(responses=[reply]), text)
    assert [(d.keep, d.content) for d in decisions] == [
        (True, "i'm  allergic to peanuts"),  # as the user wrote it, not as the model did
        (True, "my sister Ana lives in Lisbon"),
        (False, "what snacks are safe?"),
    ]
    assert decisions[0].category is Category.CONSTRAINT
    assert decisions[0].kind is MemoryKind.PREFERENCE
    assert "a question or request, not a fact" in decisions[2].reason


async def test_an_invented_memory_is_malformed_and_the_rules_decide(
    caplog: pytest.LogCaptureFixture,
) -> None:
    invented = answer([memory("The user is allergic to peanuts")])
    model = FakeListChatModel(responses=[invented, invented])
    with caplog.at_level(logging.WARNING, logger="memory.gating.gate_model"):
        decisions = await gate_all_with_model(model, "I'm allergic to peanuts.")
    assert len(decisions) == 1
    assert decisions[0].keep and decisions[0].category is Category.CONSTRAINT
    assert decisions[0].reason.startswith(MALFORMED)
    assert "not quoted from the message" in caplog.text


async def test_a_corrected_answer_is_used_after_the_retry() -> None:
    fixed = answer([memory("I use neovim")])
    model = FakeListChatModel(responses=[answer([memory("User likes vim")]), fixed])
    decisions = await gate_all_with_model(model, "I use neovim, how do I set up an LSP")
    assert [(d.keep, d.content, d.reason) for d in decisions] == [
        (True, "I use neovim", "model: about the user")
    ]


async def test_writes_per_message_are_bounded() -> None:
    many = answer([memory(w) for w in ("I live", "in Oslo", "with my", "two cats")])
    assert parse_answer(many)[0] is None
    assert MAX_MODEL_MEMORIES == 3
    model = FakeListChatModel(responses=[many, many])
    decisions = await gate_all_with_model(model, "I live in Oslo with my two cats")
    assert len(decisions) == 1 and decisions[0].reason.startswith(MALFORMED)


def test_kinds_are_validated_and_common_synonyms_mapped() -> None:
    parsed, _ = parse_answer(answer([memory("x", "Personal Fact")], category="rule"))
    assert parsed is not None
    assert (parsed.category, parsed.memories[0].category) == (Category.CONSTRAINT, Category.FACT)
    parsed, error = parse_answer(answer([memory("x", "opinion")]))
    assert parsed is None and "memories.0.category" in error


async def test_memories_of_an_answer_that_keeps_nothing_make_one_drop() -> None:
    reply = answer([memory("I'm Bob"), memory("lol")], keep=False, category="noise")
    decisions = await gate_all_with_model(FakeListChatModel(responses=[reply]), "I'm Bob lol")
    assert [d.keep for d in decisions] == [False]


async def test_a_duplicate_memory_is_stored_once() -> None:
    reply = answer([memory("I'm Bob"), memory("i'm bob.")])
    decisions = await gate_all_with_model(FakeListChatModel(responses=[reply]), "I'm Bob.")
    assert [d.content for d in decisions] == ["I'm Bob"]


async def test_a_stalled_model_times_out_to_the_rules(caplog: pytest.LogCaptureFixture) -> None:
    policy = GatePolicy(model_timeout_s=0.05)
    with caplog.at_level(logging.WARNING, logger="memory.gating.gate_model"):
        decision = await gate_with_model(SlowModel(responses=[]), "I'm Bob.", policy=policy)
    assert decision.keep  # the rules keep a self-introduction
    assert decision.reason.startswith(TIMED_OUT)
    assert "took over" in caplog.text


async def test_write_back_gets_one_decision_per_memory() -> None:
    reply = answer([memory("I'm Bob"), memory("I live in Oslo")])
    pairs = await _decide_all(
        "I'm Bob and I live in Oslo, what's the weather like?",
        "user",
        FakeListChatModel(responses=[reply]),
        GatePolicy(),
        PrivacyFilter(),
        (None, None),
        False,
    )
    assert [d.content for _, d in pairs if d.keep] == ["I'm Bob", "I live in Oslo"]


def _openai(stub: StubLLM) -> ChatOpenAI:
    return ChatOpenAI(
        model="stub-model", base_url=stub.base_url, api_key=SecretStr("stub"), max_retries=0
    )


async def test_through_an_openai_compatible_server(stub_llm: StubLLM) -> None:
    stub_llm.script(
        f"```json\n{answer([memory('My flight lands at 6:20 in Denver.')])}\n```",
        answer(importance=0.6),
    )
    model = _openai(stub_llm)
    text = "My flight lands at 6:20 in Denver. How far is the airport from downtown?"
    decisions = await gate_all_with_model(model, text)
    assert [(d.keep, d.content) for d in decisions] == [(True, "My flight lands at 6:20 in Denver")]
    assert "at most 3" in stub_llm.requests()[0]["messages"][0]["content"]
    asked = await gate_with_model(model, "is it going to rain tomorrow in Paris")
    assert not asked.keep


def test_a_quote_is_cut_from_the_message_in_linear_time() -> None:
    assert quote_of("I'M  allergic to PEANUTS.", "so i'm allergic\nto peanuts, ok") == (
        "i'm allergic\nto peanuts"
    )
    assert quote_of("allergic to cashews", "I'm allergic to peanuts") is None
    assert quote_of("  ", "anything") is None
    start = time.perf_counter()
    assert quote_of("a " * 999 + "b", "a " * 32_000) is None
    assert time.perf_counter() - start < 1.0
