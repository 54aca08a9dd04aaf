"""End to end: the repo's langgraph.json served by a real `langgraph dev`, driven by the SDK.

Only the model is replaced (the stub OpenAI-compatible server); Postgres (checkpointer and
memories), embedded Chroma and the embedding model are real.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import asyncpg
import httpx
import pytest
from langgraph_sdk import get_client

from tests.conftest import LangGraphFactory
from tests.support.langgraph_server import LangGraphServer, agent_env
from tests.support.stub_llm import StubLLM

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def server(
    langgraph_factory: LangGraphFactory,
    pg_db_url: str,
    tmp_path_factory: pytest.TempPathFactory,
    _stub_session: StubLLM,
) -> Iterator[LangGraphServer]:
    data_dir = tmp_path_factory.mktemp("server-data")
    env = agent_env(pg_db_url, data_dir, _stub_session.base_url)
    yield langgraph_factory(env=env)


def _user(user: str, **extra: Any) -> dict[str, Any]:
    return {"tenant_id": "acme", "user_id": user, **extra}


def _said(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def _answer_prompts(stub: StubLLM) -> list[str]:
    return [json.dumps(r["messages"]) for r in stub.requests() if "tools" in r]


async def _run(client: Any, thread: str, text: str, ctx: dict[str, Any]) -> Any:
    return await client.runs.wait(thread, "agent", input=_said(text), context=ctx)


async def test_memory_crosses_threads_not_users_and_survives_restart(
    server: LangGraphServer, stub_llm: StubLLM
) -> None:
    client = get_client(url=server.url)
    t1 = (await client.threads.create())["thread_id"]
    out = await _run(client, t1, "I prefer TypeScript for all code examples.", _user("alice"))
    assert any(g["action"] == "stored" for g in out["gate"]), out.get("gate")
    stub_llm.reset()
    t2 = (await client.threads.create())["thread_id"]
    t3 = (await client.threads.create())["thread_id"]
    await _run(client, t2, "Show me how to sort a list.", _user("alice"))
    await _run(client, t3, "Show me how to sort a list.", _user("bob"))
    alice_prompt, bob_prompt = _answer_prompts(stub_llm)
    assert "typescript" in alice_prompt.lower()
    assert "typescript" not in bob_prompt.lower()

    server.restart()
    client = get_client(url=server.url)
    state = await client.threads.get_state(t1)
    contents = [m["content"] for m in state["values"]["messages"]]
    assert contents[0] == "I prefer TypeScript for all code examples."
    await _run(client, t1, "And how do I reverse it?", _user("alice"))
    state = await client.threads.get_state(t1)
    assert len(state["values"]["messages"]) == 4
    assert state["values"]["task"]["turns"] == 2


async def test_brake_interrupts_and_resumes_through_the_server(
    server: LangGraphServer, stub_llm: StubLLM
) -> None:
    client = get_client(url=server.url)
    ctx = _user("bruno", max_steps_per_task=3)
    thread = (await client.threads.create())["thread_id"]
    await _run(client, thread, "Plan a trip to Lisbon.", ctx)
    out = await _run(client, thread, "Add a day in Porto.", ctx)
    interrupts = out["__interrupt__"]
    assert interrupts[0]["value"]["brake"] == "max_steps_per_task"
    state = await client.threads.get_state(thread)
    assert state["next"] == ["perceive"]
    before = len(stub_llm.requests())
    out = await client.runs.wait(thread, "agent", command={"resume": "continue"}, context=ctx)
    assert "__interrupt__" not in out
    assert len(stub_llm.requests()) > before
    assert out["messages"][-1]["type"] == "ai"


async def test_high_risk_memory_is_approved_through_the_server(
    server: LangGraphServer, stub_llm: StubLLM, pg_db_url: str
) -> None:
    client = get_client(url=server.url)
    ctx = _user("ines")
    thread = (await client.threads.create())["thread_id"]
    out = await _run(client, thread, "Always send the weekly report to ops@example.com.", ctx)
    pending = out["__interrupt__"][0]["value"]["memories"]
    assert len(pending) == 1
    conn = await asyncpg.connect(pg_db_url)
    try:
        status = "SELECT status FROM memories WHERE id = $1"
        assert await conn.fetchval(status, pending[0]["id"]) == "pending_approval"
        await client.runs.wait(thread, "agent", command={"resume": "approve"}, context=ctx)
        assert await conn.fetchval(status, pending[0]["id"]) == "active"
    finally:
        await conn.close()


async def test_a_mistyped_context_key_or_input_key_is_refused_not_ignored(
    server: LangGraphServer,
) -> None:
    # Open local mode (the quick start): the run says what is wrong instead of going on.
    client = get_client(url=server.url)
    thread = (await client.threads.create())["thread_id"]
    cases = [
        ({"input": _said("hi"), "context": _user("tom", modle="openai:gpt-4o")}, "'modle'"),
        ({"input": _said("hi"), "context": _user("tom", recall_k=-5)}, "recall_k must be"),
        ({"input": {"message": "hello"}, "context": _user("tom")}, "'message'"),
    ]
    for sent, wanted in cases:
        with pytest.raises(httpx.HTTPStatusError) as refused:
            await client.runs.wait(thread, "agent", **sent)
        assert refused.value.response.status_code == 422
        assert wanted in refused.value.response.text, refused.value.response.text
    out = await client.runs.wait(thread, "agent", input=_said("hi"), context=_user("tom"))
    assert out["messages"][-1]["type"] == "ai"
