"""Tests for the test infrastructure itself: real servers, the stub LLM, the langgraph launcher."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Sequence
from pathlib import Path

import asyncpg
import chromadb
import httpx
import openai
import pytest
from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph_sdk import get_client
from pydantic import BaseModel, SecretStr

from tests.conftest import LangGraphFactory
from tests.support.chroma_server import ChromaServer
from tests.support.langgraph_server import LangGraphServer
from tests.support.ports import REPO_ROOT, child_env, terminate
from tests.support.postgres import PostgresServer
from tests.support.stub_llm import StubClient, StubLLM
from tests.support.stub_replies import minimal_json

# --- Postgres -------------------------------------------------------------------------------


async def test_postgres_answers_and_module_db_is_fresh(pg_db_url: str, pg_url: str) -> None:
    assert pg_db_url != pg_url and pg_db_url.startswith("postgresql://test:test@127.0.0.1:")
    conn = await asyncpg.connect(pg_db_url)
    try:
        tables = await conn.fetchval(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        )
        assert tables == 0
        await conn.execute("CREATE TABLE t (id int PRIMARY KEY, body text)")
        await conn.execute("INSERT INTO t VALUES (1, 'hello')")
        assert await conn.fetchval("SELECT body FROM t WHERE id = 1") == "hello"
    finally:
        await conn.close()


async def test_postgres_stop_then_start(pg_server: PostgresServer, pg_db_url: str) -> None:
    conn = await asyncpg.connect(pg_db_url)
    await conn.execute("CREATE TABLE survives (v text); INSERT INTO survives VALUES ('kept')")
    await conn.close()
    pg_server.stop()
    assert not pg_server.is_running()
    with pytest.raises(OSError):
        await asyncpg.connect(pg_db_url, timeout=5)
    pg_server.start()
    conn = await asyncpg.connect(pg_db_url)
    try:
        assert await conn.fetchval("SELECT v FROM survives") == "kept"
    finally:
        await conn.close()


# --- Chroma ---------------------------------------------------------------------------------


@pytest.mark.server
def test_chroma_server_roundtrip_and_restart(chroma_server: ChromaServer) -> None:
    assert chroma_server.heartbeat_ok()
    client = chromadb.HttpClient(host="127.0.0.1", port=chroma_server.port)
    col = client.get_or_create_collection(
        "support-test", embedding_function=None, metadata={"hnsw:space": "cosine"}
    )
    vectors: list[Sequence[float]] = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    probe: list[Sequence[float]] = [[0.9, 0.1, 0.0]]
    col.add(ids=["a", "b"], embeddings=vectors[:2], documents=["x", "y"])
    assert col.query(query_embeddings=probe, n_results=1)["ids"] == [["a"]]

    chroma_server.stop()
    assert not chroma_server.heartbeat_ok()
    with pytest.raises(httpx.ConnectError):  # what a client sees while Chroma is down
        col.add(ids=["c"], embeddings=vectors[2:])
    chroma_server.start()
    assert client.get_collection("support-test").count() == 2


# --- stub LLM -------------------------------------------------------------------------------


def _model(stub: StubLLM, stream_usage: bool = False) -> ChatOpenAI:
    return ChatOpenAI(
        model="stub-model",
        base_url=stub.base_url,
        api_key=SecretStr("stub"),
        max_retries=0,
        stream_usage=stream_usage,
    )


async def test_stub_plain_and_streaming_record_prompt(stub_llm: StubLLM) -> None:
    model = _model(stub_llm, stream_usage=True)
    reply = await model.ainvoke([SystemMessage("be brief"), HumanMessage("hello there")])
    assert reply.content == "stub reply #1"
    assert reply.usage_metadata is not None and reply.usage_metadata["input_tokens"] == 4
    assert stub_llm.last_prompt() == "system: be brief\nuser: hello there"

    stub_llm.script("one two three")
    chunks = [chunk async for chunk in model.astream("stream please")]
    assert "".join(str(c.content) for c in chunks) == "one two three"
    assert any(c.usage_metadata for c in chunks)
    body = stub_llm.requests()[-1]
    assert body["stream"] is True and body["messages"][-1]["content"] == "stream please"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def test_stub_tool_call_round_trip(stub_llm: StubLLM) -> None:
    stub_llm.script({"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]}, "it is 5")
    model = _model(stub_llm).bind_tools([add])
    first = await model.ainvoke("what is 2+3?")
    assert first.tool_calls[0]["name"] == "add" and first.tool_calls[0]["args"] == {"a": 2, "b": 3}
    result = add.invoke(first.tool_calls[0]["args"])
    tool_msg = ToolMessage(str(result), tool_call_id=first.tool_calls[0]["id"])
    second = await model.ainvoke([HumanMessage("what is 2+3?"), first, tool_msg])
    assert second.content == "it is 5"
    sent = stub_llm.requests()[-1]["messages"]
    assert sent[-1] == {"role": "tool", "content": "5", "tool_call_id": first.tool_calls[0]["id"]}
    assert stub_llm.requests()[0]["tools"][0]["function"]["name"] == "add"


class Fact(BaseModel):
    subject: str
    score: float
    tags: list[str]
    note: str | None = None


async def test_stub_structured_output(stub_llm: StubLLM) -> None:
    structured = _model(stub_llm).with_structured_output(Fact, method="json_schema")
    assert await structured.ainvoke("extract") == Fact(subject="", score=0, tags=[])
    assert stub_llm.requests()[-1]["response_format"]["type"] == "json_schema"
    stub_llm.script(json.dumps({"subject": "tea", "score": 0.9, "tags": ["drink"]}))
    fact = await structured.ainvoke("extract")
    assert fact == Fact(subject="tea", score=0.9, tags=["drink"])


async def test_stub_failures_and_responder(stub_llm: StubLLM) -> None:
    model = _model(stub_llm)
    stub_llm.script({"status": 500}, {"raw": "this is not json"})
    with pytest.raises(openai.InternalServerError):
        await model.ainvoke("x")
    with pytest.raises(json.JSONDecodeError):
        await model.ainvoke("x")
    stub_llm.responder = lambda body: "echo: " + body["messages"][-1]["content"]
    assert (await model.ainvoke("ping")).content == "echo: ping"


def test_minimal_json_follows_schema() -> None:
    schema = {
        "type": "object",
        "required": ["a", "b", "c"],
        "$defs": {"E": {"enum": ["x", "y"]}},
        "properties": {
            "a": {"$ref": "#/$defs/E"},
            "b": {"type": "array", "minItems": 1, "items": {"type": "integer"}},
            "c": {"type": ["string", "null"]},
        },
    }
    assert minimal_json(schema) == {"a": "x", "b": [0], "c": None}


@pytest.fixture
def stub_process() -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.support.stub_llm", "--port", "0"],
        cwd=REPO_ROOT, env=child_env(), stdout=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    assert proc.stdout is not None
    yield proc.stdout.readline().decode().strip()
    terminate(proc)


async def test_stub_as_separate_process(stub_process: str) -> None:
    assert stub_process.startswith("http://127.0.0.1:") and stub_process.endswith("/v1")
    control = StubClient(stub_process)
    control.script("scripted over http")
    model = ChatOpenAI(
        model="stub-model", base_url=stub_process, api_key=SecretStr("stub"), max_retries=0
    )
    assert (await model.ainvoke("remote hello")).content == "scripted over http"
    assert control.requests()[-1]["messages"][-1]["content"] == "remote hello"
    control.reset()
    assert control.requests() == []
    assert (await model.ainvoke("again")).content == "stub reply #1"


# --- langgraph dev --------------------------------------------------------------------------

_GRAPH = """
from typing import TypedDict
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, StateGraph

class State(TypedDict):
    text: str
    reply: str

async def call_model(state: State) -> dict:
    reply = await ChatOpenAI(model="stub-model", max_retries=0).ainvoke(state["text"])
    return {"reply": reply.content}

builder = StateGraph(State)
builder.add_node("call_model", call_model)
builder.add_edge(START, "call_model")
builder.add_edge("call_model", END)
graph = builder.compile()
"""


@pytest.fixture(scope="module")
def tiny_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    app = tmp_path_factory.mktemp("tiny-app")
    (app / "tiny_graph.py").write_text(textwrap.dedent(_GRAPH))
    config = {"dependencies": ["."], "graphs": {"tiny": "./tiny_graph.py:graph"}}
    (app / "langgraph.json").write_text(json.dumps(config))
    return app / "langgraph.json"


@pytest.mark.e2e
async def test_langgraph_dev_serves_a_graph(
    langgraph_factory: LangGraphFactory, tiny_config: Path, stub_llm: StubLLM
) -> None:
    env = {"OPENAI_BASE_URL": stub_llm.base_url, "OPENAI_API_KEY": "stub"}
    server = langgraph_factory(tiny_config, env)
    client = get_client(url=server.url)
    thread = await client.threads.create()
    result = await client.runs.wait(thread["thread_id"], "tiny", input={"text": "hi graph"})
    assert result == {"text": "hi graph", "reply": "stub reply #1"}
    assert stub_llm.last_prompt() == "user: hi graph"

    server.restart()  # threads survive a restart (state kept in the server's workdir)
    again = await client.threads.get(thread["thread_id"])
    assert again["values"] == result


@pytest.mark.e2e
def test_langgraph_dev_failure_shows_log(tmp_path: Path) -> None:
    (tmp_path / "langgraph.json").write_text(
        json.dumps({"dependencies": ["."], "graphs": {"x": "./missing.py:graph"}})
    )
    server = LangGraphServer(tmp_path / "langgraph.json", workdir=tmp_path / "work")
    with pytest.raises(RuntimeError, match="missing.py"):
        server.start(timeout=60)
    assert server.proc is None
