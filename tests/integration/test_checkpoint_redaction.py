"""Checkpoints stay free of secrets while the redactor remembers what it already redacted.

Real Postgres and the project's checkpointer: a thread's old messages are saved again at every
step, from the redactor's memory, so a secret that enters the history later, through an edit
of an old message, a client replaying it, or a new turn, must still be redacted, in every
table, and the redactor's memory must not hold it either.
"""

from __future__ import annotations

import uuid
from typing import Any

import asyncpg
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, MessagesState, StateGraph

from agent.checkpointer import open_checkpointer
from memory.settings import Settings
from tests.integration.test_forget import db_hits_conn

CARD = "4111 1111 1111 1111"
PASSWORD = f"Plumbago{uuid.uuid4().hex[:10]}"


def _graph() -> StateGraph[Any, Any, Any, Any]:
    builder = StateGraph(MessagesState)
    builder.add_node("echo", lambda s: {"messages": [AIMessage(f"noted ({len(s['messages'])})")]})
    builder.add_edge(START, "echo")
    return builder


async def test_old_messages_edited_or_replayed_with_a_secret_are_redacted(pg_db_url: str) -> None:
    thread: RunnableConfig = {"configurable": {"thread_id": f"redact-{uuid.uuid4().hex}"}}
    async with open_checkpointer(Settings(database_url=pg_db_url)) as saver:
        graph = _graph().compile(checkpointer=saver)
        first = HumanMessage("my locker is on the second floor", id="h1")
        await graph.ainvoke({"messages": [first]}, thread)
        await graph.ainvoke({"messages": [HumanMessage("and the bike shed?", id="h2")]}, thread)
        # The clean history is now remembered as clean. An old message is edited (same id) to
        # carry a password, and a client replays another old one with a card number in it.
        await graph.aupdate_state(
            thread, {"messages": [HumanMessage(f"my locker password: {PASSWORD}", id="h1")]}
        )
        await graph.ainvoke({"messages": [HumanMessage(f"card {CARD} please", id="h2")]}, thread)
        await graph.ainvoke({"messages": [HumanMessage("one more turn", id="h3")]}, thread)
        state = (await graph.aget_state(thread)).values["messages"]
        held = [v for v in vars(saver.serde.redactor)["_cache"].values() if v]
    by_id = {m.id: str(m.content) for m in state}
    assert PASSWORD not in by_id["h1"] and "[REDACTED:" in by_id["h1"]
    assert CARD not in by_id["h2"] and "[REDACTED:card]" in by_id["h2"]
    assert {"h1", "h2", "h3"} <= set(by_id)  # edited in place, not appended
    # Nothing in the redactor's memory and nothing in any table holds either secret.
    assert held and not [v for v in held if PASSWORD in v or CARD in v]
    conn = await asyncpg.connect(pg_db_url)
    try:
        assert await conn.fetchval("SELECT count(*) FROM checkpoint_blobs") > 0
        assert await db_hits_conn(conn, [PASSWORD, CARD, CARD.replace(" ", "")]) == []
    finally:
        await conn.close()


async def test_a_second_process_redacts_a_history_it_never_saw(pg_db_url: str) -> None:
    """A thread continued by another worker: its redactor starts empty, nothing is trusted."""
    thread: RunnableConfig = {"configurable": {"thread_id": f"moved-{uuid.uuid4().hex}"}}
    settings = Settings(database_url=pg_db_url)
    async with open_checkpointer(settings) as saver:
        graph = _graph().compile(checkpointer=saver)
        await graph.ainvoke({"messages": [HumanMessage("hello", id="a1")]}, thread)
    async with open_checkpointer(settings) as other:
        graph = _graph().compile(checkpointer=other)
        await graph.aupdate_state(
            thread, {"messages": [HumanMessage(f"password: {PASSWORD}", id="a1")]}
        )
        await graph.ainvoke({"messages": [HumanMessage("next", id="a2")]}, thread)
        state = (await graph.aget_state(thread)).values["messages"]
    assert PASSWORD not in str([m.content for m in state])
    conn = await asyncpg.connect(pg_db_url)
    try:
        assert await db_hits_conn(conn, [PASSWORD]) == []
    finally:
        await conn.close()
