"""Deleting a run's checkpoints (`GovernedPostgresSaver.adelete_for_runs`), on real Postgres.

The server calls it when a client deletes a run and when a rollback cancels one. It must take
the run's checkpoints, their pending writes and the channel values only they held, and leave
everything a kept checkpoint still reads, on this thread and every other.
"""

from __future__ import annotations

import uuid
from operator import add
from typing import Annotated, Any, TypedDict

import asyncpg
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages

from agent.checkpointer import GovernedPostgresSaver, open_checkpointer
from memory.settings import Settings
from memory.storage.checkpoint_runs import run_on_another_thread
from memory.storage.pg import open_pool


class _State(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    profile: dict[str, str]  # set by the first turn only: later checkpoints carry its value
    seen: Annotated[list[str], add]


def _graph(saver: GovernedPostgresSaver) -> Any:
    def reply(state: _State) -> dict[str, Any]:
        said = str(state["messages"][-1].content)
        out: dict[str, Any] = {"messages": [AIMessage(f"noted: {said}")], "seen": [said]}
        if "profile" not in state:
            out["profile"] = {"home": said}
        return out

    builder = StateGraph(_State)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    return builder.compile(checkpointer=saver)


def _run(thread: str, run_id: str) -> RunnableConfig:
    # The server passes the run's id in the run's metadata; LangGraph copies it into each
    # checkpoint's metadata, which is how a run's checkpoints are found.
    return {"configurable": {"thread_id": thread}, "metadata": {"run_id": run_id}}


async def _rows(url: str, sql: str, *args: Any) -> int:
    conn = await asyncpg.connect(url)
    try:
        return int(await conn.fetchval(sql, *args))
    finally:
        await conn.close()


_OF_RUN = "SELECT count(*) FROM checkpoints WHERE metadata ->> 'run_id' = $1"
_WRITES_OF_RUN = (
    "SELECT count(*) FROM checkpoint_writes w JOIN checkpoints c USING (thread_id,"
    " checkpoint_ns, checkpoint_id) WHERE c.metadata ->> 'run_id' = $1"
)
# Channel values no checkpoint of their thread refers to any more.
_UNREAD_BLOBS = """
SELECT count(*) FROM checkpoint_blobs b WHERE b.thread_id = $1 AND NOT EXISTS (
    SELECT 1 FROM checkpoints c WHERE c.thread_id = b.thread_id
    AND c.checkpoint_ns = b.checkpoint_ns AND c.checkpoint -> 'channel_versions' ->> b.channel
    = b.version)
"""


async def test_deleting_the_last_run_returns_the_thread_to_the_run_before(pg_db_url: str) -> None:
    thread, other = f"t-{uuid.uuid4().hex}", f"t-{uuid.uuid4().hex}"
    first, second, elsewhere = (str(uuid.uuid4()) for _ in range(3))
    async with open_checkpointer(Settings(database_url=pg_db_url)) as saver:
        graph = _graph(saver)
        await graph.ainvoke({"messages": [HumanMessage("Porto")]}, _run(thread, first))
        await graph.ainvoke({"messages": [HumanMessage("Oslo")]}, _run(thread, second))
        await graph.ainvoke({"messages": [HumanMessage("Lima")]}, _run(other, elsewhere))
        before_other = (await graph.aget_state({"configurable": {"thread_id": other}})).values
        assert await _rows(pg_db_url, _OF_RUN, second) > 0
        assert await _rows(pg_db_url, _WRITES_OF_RUN, second) > 0

        await saver.adelete_for_runs([second])

        state = (await graph.aget_state({"configurable": {"thread_id": thread}})).values
        assert [m.content for m in state["messages"]] == ["Porto", "noted: Porto"]
        assert state["seen"] == ["Porto"] and state["profile"] == {"home": "Porto"}
        assert await _rows(pg_db_url, _OF_RUN, second) == 0
        assert await _rows(pg_db_url, _WRITES_OF_RUN, second) == 0
        assert await _rows(pg_db_url, _UNREAD_BLOBS, thread) == 0
        assert await _rows(pg_db_url, _OF_RUN, first) > 0
        # Another thread is not touched, and the thread goes on from the earlier run.
        after_other = (await graph.aget_state({"configurable": {"thread_id": other}})).values
        assert after_other == before_other
        await graph.ainvoke({"messages": [HumanMessage("Quito")]}, _run(thread, str(uuid.uuid4())))
        state = (await graph.aget_state({"configurable": {"thread_id": thread}})).values
        assert state["seen"] == ["Porto", "Quito"]


async def test_deleting_an_earlier_run_keeps_what_later_runs_still_read(pg_db_url: str) -> None:
    thread = f"t-{uuid.uuid4().hex}"
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    async with open_checkpointer(Settings(database_url=pg_db_url)) as saver:
        graph = _graph(saver)
        await graph.ainvoke({"messages": [HumanMessage("Porto")]}, _run(thread, first))
        await graph.ainvoke({"messages": [HumanMessage("Oslo")]}, _run(thread, second))
        blobs_before = await _rows(
            pg_db_url, "SELECT count(*) FROM checkpoint_blobs WHERE thread_id = $1", thread
        )

        await saver.adelete_for_runs([first])

        # `profile` was written by the first run only; the second run's checkpoints still
        # read that value, so it stays, and the thread's state is whole.
        state = (await graph.aget_state({"configurable": {"thread_id": thread}})).values
        assert state["profile"] == {"home": "Porto"}
        assert [m.content for m in state["messages"]][-2:] == ["Oslo", "noted: Oslo"]
        assert state["seen"] == ["Porto", "Oslo"]
        assert await _rows(pg_db_url, _OF_RUN, first) == 0
        assert await _rows(pg_db_url, _UNREAD_BLOBS, thread) == 0
        blobs_after = await _rows(
            pg_db_url, "SELECT count(*) FROM checkpoint_blobs WHERE thread_id = $1", thread
        )
        assert 0 < blobs_after < blobs_before  # the first run's own values went with it


async def test_a_run_is_placed_on_its_own_thread(pg_db_url: str) -> None:
    thread, other = f"t-{uuid.uuid4().hex}", f"t-{uuid.uuid4().hex}"
    run = str(uuid.uuid4())
    async with open_checkpointer(Settings(database_url=pg_db_url)) as saver:
        await _graph(saver).ainvoke({"messages": [HumanMessage("Porto")]}, _run(thread, run))
    async with open_pool(pg_db_url) as pool:
        assert not await run_on_another_thread(pool, run, thread)
        assert await run_on_another_thread(pool, run, other)
        assert not await run_on_another_thread(pool, str(uuid.uuid4()), other)
    # Looked up through the index, not by reading every thread's checkpoints.
    conn = await asyncpg.connect(pg_db_url)
    try:
        await conn.execute("SET enable_seqscan = off")
        plan = await conn.fetchval(
            "EXPLAIN (FORMAT JSON) SELECT 1 FROM checkpoints WHERE metadata ->> 'run_id' = $1",
            run,
        )
    finally:
        await conn.close()
    assert "checkpoints_by_run" in str(plan)
