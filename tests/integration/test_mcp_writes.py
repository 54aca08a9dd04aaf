"""The MCP write runner on real Postgres + Chroma + MiniLM, the gate model a slow stub LLM."""

from __future__ import annotations

import json

from agent.mcp_writes import WriteRunner
from memory.storage import pending_writes
from memory.storage.forget import forget_user
from memory.storage.store import MemoryStore
from memory.types import Scope
from tests.support.stub_llm import StubLLM


def _answer(text: str) -> str:
    memory = {"text": text, "category": "fact", "importance": 0.7}
    return json.dumps({"keep": True, "category": "fact", "importance": 0.7,
                       "reason": "about the user", "memories": [memory]})  # fmt: skip


async def _runner(store: MemoryStore) -> WriteRunner:
    async def get_store() -> MemoryStore:
        return store

    runner = WriteRunner(get_store, "openai:stub-model")
    await runner.warm()
    return runner


async def test_a_slow_write_is_pending_then_done_with_its_text_dropped(
    clean_store: MemoryStore, stub_llm: StubLLM
) -> None:
    scope = Scope("acme", "writes-slow")
    text = "My cat Mio is afraid of thunder."
    stub_llm.script({"delay": 1.5, "content": _answer(text)})
    runner = await _runner(clean_store)
    accepted = await runner.submit(scope, text, via="test")
    assert accepted.status == "pending" and accepted.text == text
    await runner.drain()
    done = await pending_writes.get(clean_store.pool, scope, accepted.id)
    assert done is not None and done.status == "done" and done.text is None
    assert done.result is not None
    [stored] = [m for m in done.result["memories"] if m["action"] == "stored"]
    record = await clean_store.get(scope, stored["memory_id"])
    assert record is not None and record.content.startswith("My cat Mio is afraid of thunder")
    assert await pending_writes.get(clean_store.pool, Scope("acme", "other"), accepted.id) is None


async def test_a_secret_is_redacted_before_it_is_queued(
    clean_store: MemoryStore, stub_llm: StubLLM
) -> None:
    scope = Scope("acme", "writes-secret")
    secret = "sk-proj-" + "Hq4w" * 10
    stub_llm.script({"delay": 1.0, "content": _answer("x")})
    runner = await _runner(clean_store)
    accepted = await runner.submit(scope, f"my API key is {secret}", via="test")
    assert accepted.text is not None and secret not in accepted.text
    await runner.drain()
    memories = await clean_store.list_memories(scope)
    assert all(secret not in m.content for m in memories)


async def test_a_forget_between_answer_and_completion_leaves_nothing(
    clean_store: MemoryStore, stub_llm: StubLLM
) -> None:
    scope = Scope("acme", "writes-forgotten")
    text = "My bank is in Tromsø."
    stub_llm.script({"delay": 2.0, "content": _answer(text)})
    runner = await _runner(clean_store)
    accepted = await runner.submit(scope, text, via="test")
    assert accepted.status == "pending"
    await forget_user(clean_store, scope)
    await runner.drain()
    assert await clean_store.list_memories(scope) == []
    assert await pending_writes.get(clean_store.pool, scope, accepted.id) is None
