"""Studio's memory view in open local mode: the calls it makes, against `langgraph dev`.

No `MEMORY_AUTH_SECRET`: one local developer, the namespace names the tenant and user (as the
run context does for runs). What the agent graph remembers shows up in the store; an edit made
there is a governed put (the old memory kept, superseded) and a deletion forgets everywhere.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import asyncpg
import pytest
from langgraph_sdk import get_client

from tests.conftest import LangGraphFactory
from tests.support.langgraph_server import LangGraphServer, agent_env
from tests.support.stub_llm import StubLLM

pytestmark = pytest.mark.e2e

USER = "carol" + uuid.uuid4().hex[:6]
NS = ("acme", USER, "memories")


@pytest.fixture(scope="module")
def server(
    langgraph_factory: LangGraphFactory,
    pg_db_url: str,
    tmp_path_factory: pytest.TempPathFactory,
    _stub_session: StubLLM,
) -> Iterator[LangGraphServer]:
    data_dir = tmp_path_factory.mktemp("studio-data")
    yield langgraph_factory(env=agent_env(pg_db_url, data_dir, _stub_session.base_url))


async def test_memory_view_shows_edits_and_deletes_governed(
    server: LangGraphServer, pg_db_url: str
) -> None:
    client = get_client(url=server.url)
    thread = await client.threads.create()
    await client.runs.wait(
        thread["thread_id"],
        "agent",
        input={"messages": [{"role": "user", "content": "I prefer dark mode in every editor."}]},
        context={"tenant_id": "acme", "user_id": USER},
    )
    assert list(NS) in (await client.store.list_namespaces(prefix=["acme", USER]))["namespaces"]
    items = (await client.store.search_items(NS, limit=20))["items"]
    remembered = [i for i in items if "dark mode" in i["value"]["content"]]
    assert len(remembered) == 1  # what the graph stored, as the memory view lists it
    key = remembered[0]["key"]

    # An edit in the view sends the item's value back with new content: a governed put.
    edited = {**remembered[0]["value"], "content": "I prefer light mode in every editor."}
    await client.store.put_item(NS, key, edited)
    now = await client.store.get_item(NS, key)
    assert now is not None and "light mode" in now["value"]["content"]
    old = remembered[0]["value"]["memory_id"]
    conn = await asyncpg.connect(pg_db_url)
    try:
        status = await conn.fetchval(
            "SELECT status FROM memories WHERE id = $1 AND user_id = $2", old, USER
        )
        assert status == "superseded"
        events = {
            r["event"]
            for r in await conn.fetch("SELECT event FROM memory_events WHERE user_id = $1", USER)
        }
        assert {"write", "supersede"} <= events  # audited like any write

        await client.store.delete_item(NS, key)
        assert await client.store.get_item(NS, key) is None
        left = await conn.fetch(
            "SELECT content FROM memories WHERE user_id = $1 AND content LIKE '%light mode%'", USER
        )
        assert left == []
        # The one-memory forget removes the current memory; the version it replaced stays as
        # superseded history (out of recall and of the view), as it does for any forget.
        items = (await client.store.search_items(NS, limit=20))["items"]
        assert all("dark mode" not in i["value"]["content"] for i in items)
    finally:
        await conn.close()
