"""Studio through a real `langgraph dev`: schemas, chat streams without system text, tool steps,
and the zero-key memory-only responder.

One server runs with no chat model configured (the memory-only default), one with the stub
model; Postgres, embedded Chroma and the embedding model are real.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph_sdk import get_client

from memory.working.scratchpad_tools import WRITE_TOOL
from prompts.agent import DEFAULT_SYSTEM_RULES, EVIDENCE_HEADER, MEMORY_ONLY_LABEL
from tests.conftest import LangGraphFactory
from tests.support.langgraph_server import LangGraphServer, agent_env
from tests.support.stub_llm import StubLLM

pytestmark = pytest.mark.e2e

# Lines only the composed system prompt contains.
_SYSTEM_MARKERS = (DEFAULT_SYSTEM_RULES.splitlines()[0], EVIDENCE_HEADER.splitlines()[0])


@pytest.fixture(scope="module")
def zero_key(
    langgraph_factory: LangGraphFactory, pg_db_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LangGraphServer]:
    # No MEMORY_AGENT_MODEL, no provider key: what a new user has.
    env = {"DATABASE_URL": pg_db_url, "MEMORY_DATA_DIR": str(tmp_path_factory.mktemp("zk"))}
    yield langgraph_factory(env=env)


@pytest.fixture(scope="module")
def with_model(
    langgraph_factory: LangGraphFactory,
    pg_db_url: str,
    tmp_path_factory: pytest.TempPathFactory,
    _stub_session: StubLLM,
) -> Iterator[LangGraphServer]:
    data_dir = tmp_path_factory.mktemp("stub-server")
    yield langgraph_factory(env=agent_env(pg_db_url, data_dir, _stub_session.base_url))


def _said(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def _described(schema: dict[str, Any], where: str) -> None:
    props = schema.get("properties") or {}
    assert props, f"{where}: no properties"
    missing = [name for name, spec in props.items() if not spec.get("description")]
    assert not missing, f"{where}: fields without a description: {missing}"


@pytest.mark.parametrize("graph_id", ["agent", "consolidate"])
async def test_schemas_are_served_for_both_graphs_with_descriptions(
    zero_key: LangGraphServer, graph_id: str
) -> None:
    client = get_client(url=zero_key.url)
    [assistant] = await client.assistants.search(graph_id=graph_id, limit=1)
    schemas = await client.assistants.get_schemas(assistant["assistant_id"])
    for key in ("input_schema", "output_schema", "state_schema", "context_schema"):
        assert schemas.get(key), f"{graph_id}: {key} is {schemas.get(key)!r}"
    _described(schemas["input_schema"], f"{graph_id} input")
    _described(schemas["state_schema"], f"{graph_id} state")
    _described(schemas["context_schema"], f"{graph_id} context")
    if graph_id == "agent":
        assert "base_system_prompt" in schemas["context_schema"]["properties"]


async def _stream(client: Any, thread: str, text: str, ctx: dict[str, Any]) -> list[Any]:
    return [
        part
        async for part in client.runs.stream(
            thread,
            "agent",
            input=_said(text),
            context=ctx,
            stream_mode=["messages-tuple", "updates"],
        )  # fmt: skip
    ]


def _chat_messages(parts: list[Any]) -> list[dict[str, Any]]:
    return [p.data[0] for p in parts if p.event == "messages" and isinstance(p.data, list)]


def _no_system_text(messages: list[dict[str, Any]]) -> None:
    assert messages, "the stream carried no chat messages"
    for m in messages:
        assert m.get("type") not in ("system", "SystemMessage"), m
        content = str(m.get("content"))
        for marker in _SYSTEM_MARKERS:
            assert marker not in content, f"system text streamed: {content[:200]!r}"


async def test_zero_key_turns_remember_recall_and_stream_no_system_text(
    zero_key: LangGraphServer,
) -> None:
    client = get_client(url=zero_key.url)
    user = {"tenant_id": "acme", "user_id": f"new-{uuid.uuid4().hex[:6]}"}
    t1 = (await client.threads.create())["thread_id"]
    parts = await _stream(client, t1, "I prefer green tea, never coffee.", user)
    _no_system_text(_chat_messages(parts))
    state = await client.threads.get_state(t1)
    assert any(g["action"] == "stored" for g in state["values"]["gate"]), state["values"]["gate"]
    first = state["values"]["messages"][-1]
    assert first["type"] == "ai" and str(first["content"]).startswith(MEMORY_ONLY_LABEL)

    t2 = (await client.threads.create())["thread_id"]
    parts = await _stream(client, t2, "What do I like to drink?", user)
    streamed = _chat_messages(parts)
    _no_system_text(streamed)
    text = "".join(
        str(m.get("content")) for m in streamed if m.get("type") in ("AIMessageChunk", "ai")
    )
    assert MEMORY_ONLY_LABEL in text and "green tea" in text
    nodes = {name for p in parts if p.event == "updates" for name in p.data}
    assert {"perceive", "recall", "compose", "respond", "gate_and_store"} <= nodes


async def test_tool_calls_are_their_own_step_and_the_prompt_stays_out_of_the_chat(
    with_model: LangGraphServer, stub_llm: StubLLM
) -> None:
    client = get_client(url=with_model.url)
    user = {"tenant_id": "acme", "user_id": f"tools-{uuid.uuid4().hex[:6]}"}
    stub_llm.script(
        {"tool_calls": [{"name": WRITE_TOOL, "arguments": {"content": "plan: 3 steps"}}]},
        "Done: here is the plan.",
    )
    thread = (await client.threads.create())["thread_id"]
    parts = await _stream(client, thread, "Plan the migration in three steps.", user)
    _no_system_text(_chat_messages(parts))
    order = [name for p in parts if p.event == "updates" for name in p.data]
    assert (
        order.index("respond")
        < order.index("tools")
        < len(order) - 1 - order[::-1].index("respond")
    )
    state = await client.threads.get_state(thread)
    assert [e["content"] for e in state["values"]["scratchpad"]] == ["plan: 3 steps"]
    assert state["values"]["messages"][-1]["content"] == "Done: here is the plan."
    # The model saw the composed system prompt even though the chat never did.
    assert DEFAULT_SYSTEM_RULES.splitlines()[0] in stub_llm.last_prompt()


async def test_the_base_system_prompt_is_replaceable_per_assistant(
    with_model: LangGraphServer, stub_llm: StubLLM
) -> None:
    client = get_client(url=with_model.url)
    role = "You are Captain Memo, a terse ship's navigator."
    assistant = await client.assistants.create(
        "agent", context={"base_system_prompt": role, "user_id": "captain", "tenant_id": "acme"}
    )
    thread = (await client.threads.create())["thread_id"]
    stub_llm.reset()
    await client.runs.wait(thread, assistant["assistant_id"], input=_said("Where are we?"))
    prompt = stub_llm.last_prompt()
    assert role in prompt and DEFAULT_SYSTEM_RULES.splitlines()[0] not in prompt
