"""Forget-me during a turn on another worker, through the real server with auth on.

The real `langgraph dev` server (auth on, Postgres checkpointer, a Chroma server) runs a turn
whose model answer is slow (the stub LLM waits); meanwhile the user is forgotten from another
process (`memory-agent forget`). The turn then ends on the server: its memories and its
checkpoint writes are refused. After the receipt nothing of the user is in any column of any
table; the old thread stays dead for later runs; a new thread is a new start that works.
Repeated with the forget at different points of the turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client

from memory.types import Scope
from tests.security.test_forget_everywhere import _cli_forget, _db_hits
from tests.support.langgraph_server import LangGraphServer
from tests.support.secured import bearer
from tests.support.stub_llm import StubLLM

pytestmark = pytest.mark.e2e


async def _forget_in_another_process(
    pg_db_url: str, server: LangGraphServer, who: Scope
) -> dict[str, Any]:
    return await asyncio.to_thread(_cli_forget, pg_db_url, server, who)


@pytest.mark.parametrize("forget_after_s", [0.5, 2.5])
async def test_a_turn_in_flight_on_the_server_leaves_nothing_after_the_receipt(
    secured_server: LangGraphServer,
    pg_db_url: str,
    _stub_session: StubLLM,
    forget_after_s: float,
) -> None:
    _stub_session.reset()
    tag = uuid.uuid4().hex[:8]
    who = Scope("acme", f"rhea-{tag}")
    client = get_client(url=secured_server.url, headers=bearer(who))
    thread = str((await client.threads.create())["thread_id"])
    first: Any = {"messages": [{"role": "user", "content": f"I prefer Zanthor{tag} tea."}]}
    await client.runs.wait(thread, "agent", input=first)
    needles = [f"Zanthor{tag}", f"Quellmark{tag}", who.user_id]
    assert await _db_hits(pg_db_url, needles[:1])  # stored before

    _stub_session.script({"content": "Noted.", "delay": 4})  # the answer takes 4 s
    second: Any = {"messages": [{"role": "user", "content": f"My badge says Quellmark{tag}."}]}
    run = await client.runs.create(thread, "agent", input=second)
    await asyncio.sleep(forget_after_s)
    receipt = await _forget_in_another_process(pg_db_url, secured_server, who)
    assert receipt["epoch"] >= 1
    # No request to the server until the turn has ended on its own (past the stub's delay):
    # the server deletes a forgotten user's threads (cancelling their runs) on its next
    # request, which would end the turn before it could write anything back.
    await asyncio.sleep(max(0.0, 4 - forget_after_s) + 5)
    with contextlib.suppress(httpx.HTTPStatusError):  # 404 once the thread is deleted
        await client.runs.join(thread, run["run_id"])
    assert len(_stub_session.requests()) >= 2  # the turn reached the model before the forget

    # The server's own thread records go on its next request (the CLI cannot reach them).
    async with httpx.AsyncClient(base_url=secured_server.url, timeout=60) as http:
        answer = await http.get(f"/threads/{thread}", headers=bearer(who))
    assert answer.status_code == 404
    assert await _db_hits(pg_db_url, needles) == []

    # The same thread id stays dead: a later run on it writes nothing of the user.
    again: Any = {"messages": [{"role": "user", "content": f"Remember Quellmark{tag} again."}]}
    # Refused: the thread is gone (404) or its checkpoints are refused.
    with contextlib.suppress(Exception):
        await client.runs.wait(thread, "agent", input=again)
    assert await _db_hits(pg_db_url, needles[:2]) == []

    # A new start: a new thread works and is remembered at the new epoch.
    fresh = str((await client.threads.create())["thread_id"])
    new: Any = {"messages": [{"role": "user", "content": f"I prefer Orvex{tag} coffee."}]}
    await client.runs.wait(fresh, "agent", input=new)
    assert await _db_hits(pg_db_url, [f"Orvex{tag}"])
