"""The model gate on the real write path: Postgres + Chroma + MiniLM, a fake chat model.

What the model finds is written one memory per quoted fact; what it calls a fact but asks is
dropped and audited; a malformed answer falls back to the rules and says so in the audit log.
"""

from __future__ import annotations

import json

from langchain_core.language_models.fake_chat_models import FakeListChatModel

from memory.gating.gate import MALFORMED
from memory.gating.ingest import ingest_text
from memory.storage.store import MemoryStore
from memory.types import Scope


def _answer(*texts: str, **overrides: object) -> str:
    memories = [{"text": t, "category": "fact", "importance": 0.6} for t in texts]
    base = {"keep": True, "category": "fact", "importance": 0.6, "reason": "about the user",
            "memories": memories}  # fmt: skip
    return json.dumps(base | overrides)


async def test_each_quoted_memory_is_written_and_the_question_is_not(
    clean_store: MemoryStore,
) -> None:
    scope = Scope("acme", "model-gate")
    model = FakeListChatModel(responses=[_answer("I'm Bob", "I live in Oslo")])
    results = await ingest_text(
        clean_store,
        scope,
        "I'm Bob and I live in Oslo, what's the weather like there?",
        gate_model=model,
        require_approval=False,
    )
    assert [r.action for r in results] == ["stored", "stored"]
    stored = sorted(m.content for m in await clean_store.list_memories(scope))
    assert stored == ["I live in Oslo", "I'm Bob"]


async def test_a_question_the_model_keeps_is_dropped_and_audited(
    clean_store: MemoryStore,
) -> None:
    scope = Scope("acme", "model-question")
    model = FakeListChatModel(responses=[_answer(importance=0.65)])
    results = await ingest_text(
        clean_store, scope, "what's my dog's name", gate_model=model, require_approval=False
    )
    assert [r.action for r in results] == ["dropped"]
    assert await clean_store.list_memories(scope) == []
    events = [e for e in await clean_store.events(scope) if e["event"] == "gate_drop"]
    assert len(events) == 1 and "a question or request, not a fact" in events[0]["reason"]


async def test_a_malformed_answer_falls_back_to_the_rules_with_an_audited_reason(
    clean_store: MemoryStore,
) -> None:
    scope = Scope("acme", "model-malformed")
    invented = _answer("The user has a peanut allergy")
    model = FakeListChatModel(responses=[invented, "{not json"])
    results = await ingest_text(
        clean_store, scope, "I'm allergic to peanuts.", gate_model=model, require_approval=False
    )
    assert [r.action for r in results] == ["stored"]
    assert results[0].reason.startswith(MALFORMED)
    [kept] = await clean_store.list_memories(scope)
    assert kept.content == "I'm allergic to peanuts."
    reasons = [e["reason"] for e in await clean_store.events(scope)]
    assert any(r.startswith(MALFORMED) for r in reasons)
