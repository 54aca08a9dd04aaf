"""A turn's fixed costs, through the real graph: each text is embedded once, no work repeated.

Real Postgres checkpointer and store, embedded Chroma, the stub OpenAI server.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent.checkpointer import open_checkpointer
from agent.context import Context
from agent.graph import build_graph
from agent.model import load_chat_model
from agent.nodes.perceive import recall_query
from memory.settings import Settings
from memory.storage.store import MemoryStore, open_store
from memory.types import NewMemory, Scope
from tests.support.memory_stores import truncate
from tests.support.stub_llm import StubLLM


@pytest.fixture
async def store(
    pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path
) -> AsyncIterator[MemoryStore]:
    settings = Settings(
        database_url=pg_db_url, data_dir=tmp_data_dir, embedding_model_dir=embedding_model_dir
    )
    async with open_store(settings) as s:
        await truncate(s)
        yield s


async def test_the_recall_query_is_embedded_once_starting_in_perceive(
    store: MemoryStore, pg_db_url: str, stub_llm: StubLLM
) -> None:
    load_chat_model.cache_clear()  # the stub's URL is read when the model is built
    who = Scope("acme", f"oh-{uuid.uuid4().hex[:6]}")
    await store.write(who, NewMemory(content="The quarterly report is due on Friday."))
    ctx = Context(tenant_id=who.tenant_id, user_id=who.user_id)
    config: Any = {"configurable": {"thread_id": f"oh-{uuid.uuid4().hex}", "memory_store": store}}
    text = f"When is the quarterly report due? ({uuid.uuid4().hex[:6]})"
    memo = store.embedder.memo  # type: ignore[attr-defined]
    async with open_checkpointer(Settings(database_url=pg_db_url)) as saver:
        graph: Any = build_graph().compile(checkpointer=saver, interrupt_before=["recall"])
        await graph.ainvoke({"messages": [("user", text)]}, config, context=ctx)
        state = (await graph.aget_state(config)).values
        query = recall_query(text, state.get("task"))
        # Perceive has finished and recall has not started: the query's vector is on its way.
        for _ in range(500):
            if memo.all_held([query]) is not None:
                break
            await asyncio.sleep(0.01)
        else:
            raise AssertionError("perceive did not start embedding the recall query")
        misses = memo.misses
        out = await graph.ainvoke(None, config, context=ctx)
    assert any("quarterly report" in e["content"] for e in out["evidence"])
    # Recall (the user's and the tenant's shared memory) found it done: nothing recomputed.
    # The gate computes its own texts only for what it keeps; a question is not kept.
    assert memo.misses == misses
