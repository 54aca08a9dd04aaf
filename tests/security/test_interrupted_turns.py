"""A turn cut short by a database outage or a killed server still reaches memory next turn.

The real `langgraph dev` server with auth on, real Postgres (stopped mid-turn) and a Chroma
server. The model stub answers slowly, so the outage or the `kill -9` lands while the turn is
in flight. The client gets a clear "memory store unavailable" error (the memory routes a 503
with `Retry-After`), and the next turn gates the interrupted statement as well as its own.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client

from memory.types import Scope
from tests.support.langgraph_server import LangGraphServer
from tests.support.postgres import PostgresServer
from tests.support.secured import bearer
from tests.support.stub_llm import StubLLM

pytestmark = pytest.mark.e2e

SLOW = 6.0  # seconds the model takes on the interrupted turn
INTO_TURN = 2.5  # when the outage hits


def _headers(scope: Scope) -> dict[str, str]:
    return bearer(scope)


def _turn(text: str) -> Any:
    return {"messages": [{"role": "user", "content": text}]}


async def _memories(server: LangGraphServer, who: Scope) -> str:
    async with httpx.AsyncClient(base_url=server.url, headers=_headers(who), timeout=60) as http:
        answer = await http.get("/memory/memories")
        assert answer.status_code == 200, answer.text
        return " ".join(m["content"] for m in answer.json()["memories"])


async def _start_slow_turn(
    server: LangGraphServer, stub: StubLLM, who: Scope, statement: str
) -> tuple[Any, str, str]:
    """Start a turn whose model answer takes `SLOW` seconds; (client, thread id, run id)."""
    client = get_client(url=server.url, headers=_headers(who))
    thread = str((await client.threads.create())["thread_id"])
    stub.reset()
    stub.script({"content": "Noted.", "delay": SLOW})
    run = await client.runs.create(thread, "agent", input=_turn(statement))
    await asyncio.sleep(INTO_TURN)
    return client, thread, str(run["run_id"])


@pytest.mark.parametrize(
    "statement",
    ["I prefer my reports in the Norvanese{tag} layout.", "我更喜欢用 Velt{tag} 格式写周报。"],
)
async def test_postgres_stopped_mid_turn(
    secured_server: LangGraphServer,
    pg_server: PostgresServer,
    _stub_session: StubLLM,
    statement: str,
) -> None:
    tag = uuid.uuid4().hex[:8]
    who = Scope("acme", f"ivy-{tag}")
    text = statement.format(tag=tag)
    client, thread, run_id = await _start_slow_turn(secured_server, _stub_session, who, text)
    await asyncio.to_thread(pg_server.stop)
    try:
        result = await client.runs.join(thread, run_id)
        error = result.get("__error__") if isinstance(result, dict) else None
        assert error is not None, result
        assert error["error"] == "MemoryStoreUnavailable"
        assert "memory store unavailable" in error["message"]
        async with httpx.AsyncClient(base_url=secured_server.url, headers=_headers(who)) as http:
            down = await http.get("/memory/memories", timeout=60)
        assert down.status_code == 503 and down.headers["Retry-After"].isdigit()
        assert "memory store unavailable" in down.json()["detail"]
    finally:
        await asyncio.to_thread(pg_server.start)
    await _retrying_turn(client, thread, "Thanks, that's all for now.")
    assert f"{tag}" in await _memories(secured_server, who)


async def _retrying_turn(client: Any, thread: str, text: str) -> None:
    """A client that honours "retry shortly": the pools reconnect with a backoff that grows
    with the outage's length (1, 2, 4 ... s), so the first turn after a long one may still
    find the store unavailable."""
    for _ in range(24):
        try:
            await client.runs.wait(thread, "agent", input=_turn(text))
            return
        except Exception as exc:
            if "memory store unavailable" not in str(exc):
                raise
            await asyncio.sleep(5)
    raise AssertionError("the store never became available again")


async def test_server_killed_mid_turn(
    secured_server: LangGraphServer, _stub_session: StubLLM
) -> None:
    tag = uuid.uuid4().hex[:8]
    who = Scope("acme", f"kit-{tag}")
    statement = f"Remember that our deploy window is Thursdays at Brellin{tag} time."
    _, thread, _ = await _start_slow_turn(secured_server, _stub_session, who, statement)
    await asyncio.to_thread(secured_server.kill)
    await asyncio.to_thread(secured_server.start)
    client = get_client(url=secured_server.url, headers=_headers(who))
    # The server may have lost its registry entry for the thread (nothing was flushed): the
    # checkpoints in Postgres are the thread's working memory either way.
    await client.runs.wait(thread, "agent", input=_turn("OK, thanks."), if_not_exists="create")
    assert f"Brellin{tag}" in await _memories(secured_server, who)
