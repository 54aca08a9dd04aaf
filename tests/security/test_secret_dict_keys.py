"""A secret sent as a mapping's key is redacted at the door and in the checkpoints.

A client's message may carry fields of its own: LangChain keeps an unknown key as one of the
message's `additional_kwargs`, in the thread's state and in every checkpoint. Before, the
structure redactor redacted values only, so `{"role": "user", "content": "…", "sk-proj-…":
"my key"}` put the key in 4 checkpoint blobs and 2 writes (sec3 finding 9). Keys are now judged
as values under identifier keys are: kept while they read as an identifier with no named
secret, redacted otherwise.
"""

from __future__ import annotations

import uuid
from typing import Any

import asyncpg
from langchain_core.messages import AIMessage, HumanMessage, convert_to_messages
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import START, MessagesState, StateGraph

from agent.checkpointer import RedactingSerializer, open_checkpointer
from agent.input_guard import guard_run_input
from memory.gating.privacy.deep import StructureRedactor
from memory.settings import Settings
from tests.integration.test_forget import db_hits_conn

KEY = f"sk-proj-{uuid.uuid4().hex[:8]}AbCdEfGhIjKlMnOpQrStUv"
HF = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567"
CARD = "4111 1111 1111 1111"


def _message() -> dict[str, Any]:
    return {"role": "user", "content": "What's the weather like on Mars?", KEY: "my key"}


def test_the_door_redacts_a_secret_key_of_a_message() -> None:
    kwargs: dict[str, Any] = {"input": {"messages": [_message()]}}
    guard_run_input(kwargs, limit=64_000)
    message = kwargs["input"]["messages"][0]
    assert KEY not in str(kwargs)
    assert message["content"] == "What's the weather like on Mars?"
    assert message["[REDACTED:api_key]"] == "my key"


def test_the_checkpoint_serializer_redacts_a_secret_key_of_additional_kwargs() -> None:
    message = convert_to_messages([_message()])[0]
    assert KEY in message.additional_kwargs  # how LangChain keeps an unknown field
    serializer = RedactingSerializer(JsonPlusSerializer())
    _, data = serializer.dumps_typed({"messages": [message]})
    assert KEY.encode() not in data and b"REDACTED:api_key" in data


def test_identifier_keys_are_kept_and_secret_keys_never_merge() -> None:
    redactor = StructureRedactor()
    plain = {
        "content": "hi",
        "a1b2c3d4-e5f6-4711-8899-aabbccddeeff": 1,  # a uuid: its digits are no card
        "branch:to:perceive": 2,
        "__start__": 3,
        "v1.2.3": 4,
    }
    assert redactor.value(plain) is plain
    secrets = {KEY: 1, HF: 2, f"card {CARD}": 3, "ok": 4}
    out = redactor.value(secrets)
    assert sorted(out.values()) == [1, 2, 3, 4]  # two api keys: two entries
    assert not any(s in str(out) for s in (KEY, HF, CARD))
    assert "[REDACTED:card]" in str(out)


async def test_a_secret_message_key_never_reaches_a_checkpoint_table(pg_db_url: str) -> None:
    builder = StateGraph(MessagesState)
    builder.add_node("echo", lambda s: {"messages": [AIMessage("noted")]})
    builder.add_edge(START, "echo")
    thread: RunnableConfig = {"configurable": {"thread_id": f"keys-{uuid.uuid4().hex}"}}
    async with open_checkpointer(Settings(database_url=pg_db_url)) as saver:
        graph = builder.compile(checkpointer=saver)
        await graph.ainvoke({"messages": [_message()]}, thread)
        await graph.ainvoke({"messages": [HumanMessage("and on Venus?")]}, thread)
        state = (await graph.aget_state(thread)).values["messages"]
    assert "[REDACTED:api_key]" in state[0].additional_kwargs
    conn = await asyncpg.connect(pg_db_url)
    try:
        assert await conn.fetchval("SELECT count(*) FROM checkpoint_blobs") > 0
        assert await db_hits_conn(conn, [KEY]) == []
    finally:
        await conn.close()
