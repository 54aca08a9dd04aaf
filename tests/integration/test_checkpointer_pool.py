"""The checkpointer's pool skips the liveness round trip for connections used moments ago.

Real Postgres, restarted between two turns: the connections in the pool die with it, and the
next turn must still succeed (the saver drops the dead connections and retries), with both
turns in the thread.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, MessagesState, StateGraph
from psycopg_pool import AsyncConnectionPool

import agent.checkpointer as checkpointer
from agent.checkpointer import open_checkpointer
from memory.settings import Settings
from tests.support.postgres import PostgresServer


def _graph() -> StateGraph[MessagesState, None, MessagesState, MessagesState]:
    builder = StateGraph(MessagesState)
    builder.add_node("echo", lambda s: {"messages": [AIMessage(f"noted ({len(s['messages'])})")]})
    builder.add_edge(START, "echo")
    return builder


async def test_busy_connections_skip_the_check_and_a_restart_loses_no_turn(
    pg_server: PostgresServer, pg_db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every connection counts as just used: none is checked before use, so the connections the
    # restart kills are handed out as they are and the retry is what saves the turn.
    monkeypatch.setattr(checkpointer, "_RECHECK_AFTER_S", 3600.0)
    checks = 0
    real_check = AsyncConnectionPool.check_connection

    async def counted(conn: Any) -> None:
        nonlocal checks
        checks += 1
        await real_check(conn)

    monkeypatch.setattr(AsyncConnectionPool, "check_connection", counted)
    thread: RunnableConfig = {"configurable": {"thread_id": f"pool-{uuid.uuid4().hex}"}}
    async with open_checkpointer(Settings(database_url=pg_db_url)) as saver:
        graph = _graph().compile(checkpointer=saver)
        await graph.ainvoke({"messages": [HumanMessage("first", id="h1")]}, thread)
        for n in range(3):
            await graph.ainvoke({"messages": [HumanMessage(f"again {n}", id=f"r{n}")]}, thread)
        stats = saver.conn.get_stats()  # type: ignore[union-attr]
        # Four turns of reads and writes: each connection is checked at its first use only,
        # never again while it is in use every moment.
        assert stats["requests_num"] >= 8
        assert 0 < checks <= stats["connections_num"] < stats["requests_num"]
        await asyncio.to_thread(pg_server.stop)
        await asyncio.to_thread(pg_server.start)
        await graph.ainvoke({"messages": [HumanMessage("after the restart", id="h2")]}, thread)
        messages = (await graph.aget_state(thread)).values["messages"]
    texts = [str(m.content) for m in messages]
    assert texts[0] == "first" and "after the restart" in texts
    assert texts[-1].startswith("noted")
