"""The gate model reads what a statement replaces, on the real write path.

Real Postgres + Chroma + MiniLM; the model is `ChatOpenAI` against the local stub server, which
answers the gate's prompt (keep the message as a fact) and the update prompt as each test says.
Each pair is one the rules read wrongly, so the test shows the model's reading taking effect.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from langchain_openai import ChatOpenAI

from memory.gating.decision import GatePolicy
from memory.gating.gate_model import MALFORMED
from memory.gating.ingest import ingest_text
from memory.storage.store import MemoryStore
from memory.types import Scope
from tests.support.stub_llm import StubLLM
from tests.support.stub_replies import prompt_text

WINDOWS = "I use Windows on my personal laptop."
MACBOOK = "My personal machine is a MacBook Air running macOS."
DARK = "我喜欢用深色主题。"
DARK_AGAIN = "我所有软件都设成了暗色模式，亮色看着眼睛累。"


def _is_update_prompt(body: dict[str, Any]) -> bool:
    return "memory of one user up to date" in prompt_text(body)


def _responder(update_reply: str, category: str) -> Callable[[dict[str, Any]], str]:
    def answer(body: dict[str, Any]) -> str:
        if _is_update_prompt(body):
            return update_reply
        message = body["messages"][-1]["content"].split("<<<\n", 1)[1].split("\n>>>", 1)[0]
        memory = {"text": message, "category": category, "importance": 0.7}
        return json.dumps({"keep": True, "category": category, "importance": 0.7,
                           "reason": "about the user", "memories": [memory]})  # fmt: skip

    return answer


@pytest.fixture
def model(stub_llm: StubLLM) -> ChatOpenAI:
    return ChatOpenAI(base_url=stub_llm.base_url, api_key="stub", model="stub-model")  # type: ignore[arg-type]


async def _say(
    store: MemoryStore, scope: Scope, text: str, day: str, model: ChatOpenAI | None
) -> list[str]:
    at = datetime.fromisoformat(day).replace(tzinfo=UTC)
    results = await ingest_text(store, scope, text, occurred_at=at, gate_model=model,
                                require_approval=False)  # fmt: skip
    return [r.action for r in results]


async def test_the_model_reads_an_update_the_rules_miss(
    clean_store: MemoryStore, stub_llm: StubLLM, model: ChatOpenAI
) -> None:
    rules = Scope("acme", "rules-only")
    assert await _say(clean_store, rules, WINDOWS, "2024-01-05", None) == ["stored"]
    assert await _say(clean_store, rules, MACBOOK, "2025-03-01", None) == ["stored"]

    scope = Scope("acme", "model-reads")
    stub_llm.responder = _responder(json.dumps({"replaces": [1], "agrees": []}), "fact")
    assert await _say(clean_store, scope, WINDOWS, "2024-01-05", model) == ["stored"]
    assert not any(_is_update_prompt(b) for b in stub_llm.requests())  # nothing to replace yet
    assert await _say(clean_store, scope, MACBOOK, "2025-03-01", model) == ["superseded"]
    [old] = await clean_store.list_memories(scope, statuses=("superseded",))
    [new] = await clean_store.list_memories(scope)
    # The model gate stores its quote of the message, without the closing full stop.
    assert (old.content, new.content) == (WINDOWS[:-1], MACBOOK[:-1])
    assert old.superseded_by == new.id
    assert old.valid_to == new.valid_from == datetime(2025, 3, 1, tzinfo=UTC)
    asked = [prompt_text(b) for b in stub_llm.requests() if _is_update_prompt(b)]
    assert len(asked) == 1 and f"1. <<<{WINDOWS[:-1]}>>>" in asked[0] and MACBOOK[:-1] in asked[0]
    events = [e for e in await clean_store.events(scope) if e["event"] == "conflict"]
    assert events and all("gate model" in e["reason"] for e in events)


async def test_an_agreement_the_rules_take_for_a_conflict_reinforces(
    clean_store: MemoryStore, stub_llm: StubLLM, model: ChatOpenAI
) -> None:
    rules = Scope("acme", "rules-dark")
    assert await _say(clean_store, rules, DARK, "2024-01-05", None) == ["stored"]
    assert await _say(clean_store, rules, DARK_AGAIN, "2024-02-05", None) == ["superseded"]

    scope = Scope("acme", "model-dark")
    stub_llm.responder = _responder(json.dumps({"replaces": [], "agrees": [1]}), "preference")
    assert await _say(clean_store, scope, DARK, "2024-01-05", model) == ["stored"]
    assert await _say(clean_store, scope, DARK_AGAIN, "2024-02-05", model) == ["reinforced"]
    assert await clean_store.list_memories(scope, statuses=("superseded",)) == []
    assert [m.content for m in await clean_store.list_memories(scope)] == [DARK[:-1]]


async def test_a_malformed_reading_leaves_the_rules_verdict_and_says_so(
    clean_store: MemoryStore, stub_llm: StubLLM, model: ChatOpenAI
) -> None:
    scope = Scope("acme", "model-malformed")
    stub_llm.responder = _responder('{"replaces": [7]}', "fact")
    assert await _say(clean_store, scope, WINDOWS, "2024-01-05", model) == ["stored"]
    results = await ingest_text(clean_store, scope, MACBOOK, gate_model=model,
                                require_approval=False)  # fmt: skip
    assert [r.action for r in results] == ["stored"]
    assert f"update reading: {MALFORMED}" in results[0].reason
    assert sum(_is_update_prompt(b) for b in stub_llm.requests()) == 2  # asked, then retried
    writes = [e["reason"] for e in await clean_store.events(scope)]
    assert any(f"update reading: {MALFORMED}" in r for r in writes)


async def test_the_update_prompt_holds_the_statement_as_redacted(
    clean_store: MemoryStore, stub_llm: StubLLM, model: ChatOpenAI
) -> None:
    scope = Scope("acme", "model-redacted")
    stub_llm.responder = _responder(json.dumps({"replaces": [1], "agrees": []}), "fact")
    await _say(clean_store, scope, "I live in Berlin.", "2024-01-05", model)
    await _say(clean_store, scope, "Moved to Lisbon, write to me at bob.k@example.com",
               "2025-01-05", model)  # fmt: skip
    bodies = [json.dumps(b) for b in stub_llm.requests()]
    assert any("Lisbon" in b and "up to date" in b for b in bodies)
    assert not any("bob.k@example.com" in b for b in bodies)


async def test_a_policy_can_leave_updates_to_the_rules(
    clean_store: MemoryStore, stub_llm: StubLLM, model: ChatOpenAI
) -> None:
    scope = Scope("acme", "model-gates-only")
    stub_llm.responder = _responder(json.dumps({"replaces": [1], "agrees": []}), "fact")
    policy = GatePolicy(model_reads_updates=False)
    for text in (WINDOWS, MACBOOK):
        results = await ingest_text(clean_store, scope, text, gate_model=model, policy=policy,
                                    require_approval=False)  # fmt: skip
        assert [r.action for r in results] == ["stored"]
    assert not any(_is_update_prompt(b) for b in stub_llm.requests())
    assert len(stub_llm.requests()) == 2  # the gate's two calls, nothing else
