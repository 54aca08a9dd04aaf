"""LangMem's memory tools in a prebuilt agent (`langchain.agents.create_agent`) over GovernedStore.

The model is the stub LLM behind `ChatOpenAI` (its real client code path), scripted to make the
tool calls a real model would; everything else is real: Postgres, Chroma, MiniLM, the gate.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_openai import ChatOpenAI

from agent.store import open_governed_store
from memory.governed_store import GovernedStore, ScopeDeniedError
from memory.settings import Settings
from memory.storage.export import export_user
from memory.system import recaller
from memory.types import Scope
from tests.support.langmem_graph import build
from tests.support.memory_stores import truncate
from tests.support.stub_llm import StubLLM

ALICE, BOB = Scope("acme", "alice"), Scope("acme", "bob")
NAMESPACE = ("acme", "{user_id}", "memories")
CARD = "4111 1111 1111 1111"


@pytest.fixture
async def store(
    pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path
) -> AsyncIterator[GovernedStore]:
    settings = Settings(
        database_url=pg_db_url, data_dir=tmp_data_dir, embedding_model_dir=embedding_model_dir
    )
    async with open_governed_store(settings, require_approval=False) as governed:
        await truncate(governed.memory)
        yield governed


def _manage(content: str, action: str = "create", **extra: Any) -> dict[str, Any]:
    arguments = {"content": content, "action": action, **extra}
    return {"tool_calls": [{"name": "manage_memory", "arguments": arguments}]}


def _search(query: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "search_memory", "arguments": {"query": query}}]}


async def _turn(agent: Any, text: str, user: str, thread: str, **configurable: Any) -> list[Any]:
    config = {"configurable": {"thread_id": thread, "user_id": user, **configurable}}
    out = await agent.ainvoke({"messages": [("user", text)]}, config)
    return list(out["messages"])


def _tool_outputs(messages: list[Any]) -> str:
    return "\n".join(str(m.content) for m in messages if isinstance(m, ToolMessage))


async def test_langmem_tools_remember_across_threads_governed(
    store: GovernedStore, stub_llm: StubLLM
) -> None:
    model = ChatOpenAI(base_url=stub_llm.base_url, api_key="stub", model="stub-model")  # type: ignore[arg-type]
    agent = build(model, NAMESPACE, store)
    stub_llm.script(
        _manage("I am allergic to peanuts and shellfish."),
        "Noted.",
        _manage(f"My card number is {CARD}, I always pay with it."),
        "Noted.",
        _manage("lol ok"),
        "Noted.",
    )
    await _turn(agent, "I'm allergic to peanuts and shellfish.", "alice", "t1")
    await _turn(agent, "Use my card for bookings.", "alice", "t1")
    await _turn(agent, "lol ok", "alice", "t1")

    # A new thread: the agent finds what it stored, through LangMem's search tool.
    stub_llm.script(_search("food allergies"), "You are allergic to peanuts.")
    found = _tool_outputs(await _turn(agent, "What can't I eat?", "alice", "t2"))
    assert "peanuts" in found
    assert "score_breakdown" in found  # the project's hybrid recall, explained

    memories = await store.memory.list_memories(ALICE)
    contents = [m.content for m in memories]
    assert any("peanuts" in c for c in contents)
    assert any("[REDACTED:card]" in c for c in contents)  # redacted before it was stored
    assert all(CARD not in c for c in contents) and CARD not in found
    assert all("lol" not in c for c in contents)  # chit-chat dropped by the gate
    hits = await recaller(store.memory).recall(ALICE, "allergy", k=3, record_access=False)
    assert "peanuts" in hits[0].record.content  # the project's own recall sees it
    exported = json.dumps(await export_user(store.memory, ALICE))
    assert "peanuts" in exported

    # Bob's thread of the same agent: his namespace, none of Alice's memories.
    stub_llm.script(_search("allergies"), "I don't know.")
    assert "peanuts" not in _tool_outputs(await _turn(agent, "Allergies?", "bob", "t3"))
    assert await store.memory.list_memories(BOB) == []


async def test_langmem_update_supersedes_and_delete_forgets(
    store: GovernedStore, stub_llm: StubLLM
) -> None:
    model = ChatOpenAI(base_url=stub_llm.base_url, api_key="stub", model="stub-model")  # type: ignore[arg-type]
    agent = build(model, NAMESPACE, store)
    stub_llm.script(_manage("I prefer Python for scripting."), "ok")
    messages = await _turn(agent, "I prefer Python.", "alice", "u1")
    key = _tool_outputs(messages).split()[-1]  # "created memory <uuid>"
    stub_llm.script(_manage("I prefer Rust for scripting.", "update", id=key), "ok")
    await _turn(agent, "Actually Rust.", "alice", "u1")
    item = await store.aget(("acme", "alice", "memories"), key)
    assert item is not None and "Rust" in item.value["content"]
    assert [m.content for m in await store.memory.list_memories(ALICE)] == [
        "I prefer Rust for scripting."
    ]
    stub_llm.script(_manage("", "delete", id=key), "ok")
    await _turn(agent, "Forget that.", "alice", "u1")
    assert await store.aget(("acme", "alice", "memories"), key) is None
    assert await store.memory.list_memories(ALICE) == []


async def test_an_authenticated_run_cannot_name_another_user(
    store: GovernedStore, stub_llm: StubLLM
) -> None:
    model = ChatOpenAI(base_url=stub_llm.base_url, api_key="stub", model="stub-model")  # type: ignore[arg-type]
    agent = build(model, NAMESPACE, store)
    await store.aput(("acme", "alice", "memories"), "a", {"content": "I am allergic to peanuts."})
    stub_llm.script(_search("allergies"), "done")
    # The run is Bob's (as the server stamps it); the namespace template says Alice.
    bob = {"identity": "bob", "tenant_id": "acme"}
    with pytest.raises(ScopeDeniedError, match="outside the caller"):
        await _turn(agent, "x", "alice", "v1", langgraph_auth_user=bob)
    # The same template for Bob's own run reaches Bob's (empty) memory only.
    stub_llm.script(_search("allergies"), "done")
    out = _tool_outputs(await _turn(agent, "x", "bob", "v2", langgraph_auth_user=bob))
    assert "peanuts" not in out
