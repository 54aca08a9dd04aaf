"""The LangGraph store API (`/store/*`, what Studio's memory view calls) over governed memory.

A real `langgraph dev` with the repo's langgraph.json (plus a LangMem agent graph), auth on
(`MEMORY_AUTH_SECRET`), driven by `langgraph_sdk` with tokens for two users of one tenant and
one of another tenant.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

from agent.auth import PERMISSION_ADMIN
from agent.auth_tokens import mint_token
from memory.types import Scope
from tests.conftest import LangGraphFactory
from tests.support.langgraph_server import LangGraphServer, _absolute, agent_env
from tests.support.ports import REPO_ROOT
from tests.support.stub_llm import StubLLM

pytestmark = pytest.mark.e2e

SECRET = "e2e-store-secret-" + uuid.uuid4().hex
TAG = uuid.uuid4().hex[:8]
# Letters only: the rule gate reads a digit run inside a statement as an error code (a failure
# lesson), and the private preference below must stay a preference.
WORD = TAG.translate(str.maketrans("0123456789", "ghijklmnop"))
ALICE, BOB, GLOBEX = Scope("acme", "alice"), Scope("acme", "bob"), Scope("globex", "alice")
GLOBEX_ROOT = Scope("globex", "root")
CARD = "4111 1111 1111 1111"
MEM = ("memories",)


@pytest.fixture(scope="module")
def server(
    langgraph_factory: LangGraphFactory,
    pg_db_url: str,
    tmp_path_factory: pytest.TempPathFactory,
    _stub_session: StubLLM,
) -> Iterator[LangGraphServer]:
    work = tmp_path_factory.mktemp("store-config")
    config = _absolute(json.loads((REPO_ROOT / "langgraph.json").read_text()), REPO_ROOT)
    config["graphs"]["langmem"] = f"{REPO_ROOT / 'tests/support/langmem_graph.py'}:graph"
    path = Path(work) / "langgraph.json"
    path.write_text(json.dumps(config))
    data_dir = tmp_path_factory.mktemp("store-data")
    # A graph a fork adds runs only once the operator's run policy names it (deny by default).
    env = agent_env(
        pg_db_url,
        data_dir,
        _stub_session.base_url,
        MEMORY_AUTH_SECRET=SECRET,
        MEMORY_RUN_POLICY="langmem=user",
        # Every user here (up to the deep searcher's 260 memories) is ranked over all their
        # rows, whatever tier serves the search.
        MEMORY_RECALL_L2_CANDIDATES="1000",
    )
    yield langgraph_factory(config=path, env=env)


def _client(server: LangGraphServer, who: Scope, **kw: Any) -> LangGraphClient:
    token = mint_token(who, SECRET, **kw)
    return get_client(url=server.url, headers={"Authorization": f"Bearer {token}"})


async def _contents(client: LangGraphClient, query: str | None = None) -> list[str]:
    found = await client.store.search_items(MEM, query=query, limit=50)
    return [str(i["value"]["content"]) for i in found["items"]]


async def test_store_api_is_governed_and_isolated(server: LangGraphServer) -> None:
    alice, bob, globex = (_client(server, s) for s in (ALICE, BOB, GLOBEX))
    secret = f"I keep my Zorblax{TAG} notes in the blue binder."
    await alice.store.put_item(MEM, "binder", {"content": secret})
    await alice.store.put_item(
        MEM, "card", {"content": f"My card number is {CARD}, I always pay with it."}
    )
    item = await alice.store.get_item(MEM, "binder")
    assert item is not None and item["value"]["content"] == secret
    assert item["namespace"] == ["acme", "alice", "memories"]  # the token's scope, prefixed
    card = await alice.store.get_item(MEM, "card")
    assert card is not None and "[REDACTED:card]" in card["value"]["content"]
    assert CARD not in json.dumps(await alice.store.search_items(MEM, query="card"))

    # Bob (same tenant) and Alice of another tenant: nothing of Alice's, in any call.
    for other in (bob, globex):
        assert await other.store.get_item(MEM, "binder") is None
        assert f"Zorblax{TAG}" not in json.dumps(await _contents(other, f"Zorblax{TAG} binder"))
        assert await _contents(other) == []
        for spoofed in (("acme", "alice", "memories"), ("acme", "alice")):
            for call in (
                other.store.search_items(spoofed, query="binder"),
                other.store.get_item(spoofed, "binder"),
                other.store.delete_item(spoofed, "binder"),
                other.store.put_item(spoofed, "binder", {"content": "I like tea.", "insist": True}),
                other.store.list_namespaces(prefix=spoofed),
            ):
                with pytest.raises(httpx.HTTPStatusError) as info:
                    await call
                assert info.value.response.status_code == 403
        await other.store.delete_item(MEM, "binder")  # their own namespace: nothing to delete
        await other.store.delete_item(MEM, str(item["value"]["memory_id"]))
        listed = await other.store.list_namespaces()
        assert ["acme", "alice", "memories"] not in listed["namespaces"]
    assert await alice.store.get_item(MEM, "binder") is not None  # survived every attempt
    mine = await alice.store.list_namespaces()
    assert mine["namespaces"] == [["acme", "alice", "memories"]]

    # An admin token is confined the same way: admin rights cover graphs and crons, not memory.
    admin = _client(server, Scope("acme", "root"), permissions=[PERMISSION_ADMIN])
    assert await admin.store.get_item(MEM, "binder") is None
    with pytest.raises(httpx.HTTPStatusError):
        await admin.store.search_items(("acme", "alice"), query="binder")


async def test_insist_contradiction_and_delete(server: LangGraphServer) -> None:
    bob = _client(server, BOB)
    await bob.store.put_item(MEM, "chat1", {"content": "lol ok, nice weather today"})
    assert await bob.store.get_item(MEM, "chat1") is None  # chit-chat: dropped by the gate
    await bob.store.put_item(
        MEM, "chat2", {"content": "lol ok, nice weather today", "insist": True}
    )
    kept = await bob.store.get_item(MEM, "chat2")
    assert kept is not None and kept["value"]["status"] == "active"

    await bob.store.put_item(MEM, "lang", {"content": "I prefer Python."})
    await bob.store.put_item(MEM, "lang2", {"content": "Actually, I now prefer Rust."})
    old = await bob.store.get_item(MEM, "lang")
    new = await bob.store.get_item(MEM, "lang2")
    assert old is not None and new is not None
    assert old["value"]["status"] == "superseded"
    assert old["value"]["superseded_by"] == new["value"]["memory_id"]
    found = await bob.store.search_items(MEM, query="which language do I prefer?", limit=3)
    assert found["items"][0]["key"] == "lang2"
    assert found["items"][0]["value"]["score_breakdown"]["total"] == pytest.approx(
        found["items"][0]["score"]
    )
    assert all("Python" not in i["value"]["content"] for i in found["items"])

    await bob.store.delete_item(MEM, "lang2")
    assert await bob.store.get_item(MEM, "lang2") is None
    assert "Rust" not in json.dumps(await _contents(bob))


async def test_bad_input_is_refused_and_loses_nothing(server: LangGraphServer) -> None:
    alice = _client(server, ALICE)
    before = await _contents(alice)
    for ns, value, status, says in (
        (("nosuchsection",), {"content": "I like tea."}, 400, "section must be one of"),
        (MEM, {"text-without-content": "x"}, 400, "needs 'content'"),
        (MEM, {"content": "x", "insist": "yes"}, 400, "'insist' must be"),
        (("memories", "deeper"), {"content": "I like tea."}, 403, "relative to your own"),
    ):
        with pytest.raises(httpx.HTTPStatusError) as info:
            await alice.store.put_item(ns, "bad", value)
        assert info.value.response.status_code == status and says in info.value.response.text
    assert await _contents(alice) == before


async def test_langmem_agent_under_the_server(server: LangGraphServer, stub_llm: StubLLM) -> None:
    alice = _client(server, ALICE)
    stub_llm.script(
        {
            "tool_calls": [
                {
                    "name": "manage_memory",
                    "arguments": {"content": f"I am allergic to Kelpnut{TAG}.", "action": "create"},
                }
            ]
        },
        "Noted.",
    )
    thread = await alice.threads.create()
    await alice.runs.wait(
        thread["thread_id"],
        "langmem",
        input={"messages": [{"role": "user", "content": "Remember my allergy."}]},
    )
    hits = await _contents(alice, "allergy")
    assert any(f"Kelpnut{TAG}" in c for c in hits)  # runtime.store is the governed store
    assert f"Kelpnut{TAG}" not in json.dumps(await _contents(_client(server, BOB), "allergy"))
    async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
        exported = await http.get(
            "/memory/export", headers={"Authorization": f"Bearer {mint_token(ALICE, SECRET)}"}
        )
    assert exported.status_code == 200 and f"Kelpnut{TAG}" in exported.text


async def _chat(client: LangGraphClient, assistant: str, text: str) -> None:
    thread = await client.threads.create()
    await client.runs.wait(
        thread["thread_id"], assistant, input={"messages": [{"role": "user", "content": text}]}
    )


async def test_two_assistants_share_knowledge_not_private_memory(
    server: LangGraphServer, stub_llm: StubLLM, pg_db_url: str
) -> None:
    admin = _client(server, Scope("acme", "root"), permissions=[PERMISSION_ADMIN])
    planner = await admin.assistants.create(
        "agent", context={"agent_id": "planner", "share_categories": ["failure_lesson"]}
    )
    helper = await admin.assistants.create("agent", context={"agent_id": "helper"})
    alice, bob, globex = (_client(server, s) for s in (ALICE, BOB, GLOBEX))
    lesson = f"Lesson learned: deploying Frobnicator{TAG} fails unless the cache is warmed first."
    private = f"I prefer the Quibble{WORD} build tool for all my projects."
    await _chat(alice, planner["assistant_id"], lesson)
    await _chat(alice, planner["assistant_id"], private)
    await _chat(alice, helper["assistant_id"], f"Lesson learned: Gronk{TAG} crashes without RAM.")

    # Another tenant can neither run acme's assistants nor, with one of its own under the same
    # agent id, see what acme's agents shared.
    with pytest.raises(httpx.HTTPStatusError) as refused:
        await _chat(globex, helper["assistant_id"], f"How do I deploy Frobnicator{TAG}?")
    assert refused.value.response.status_code in (403, 404)
    globex_admin = _client(server, GLOBEX_ROOT, permissions=[PERMISSION_ADMIN])
    globex_helper = await globex_admin.assistants.create("agent", context={"agent_id": "helper"})

    stub_llm.reset()
    await _chat(bob, helper["assistant_id"], f"How do I deploy Frobnicator{TAG}?")
    await _chat(globex, globex_helper["assistant_id"], f"How do I deploy Frobnicator{TAG}?")
    prompts = [json.dumps(r["messages"]) for r in stub_llm.requests() if "tools" in r]
    assert len(prompts) == 2
    bob_prompt, globex_prompt = prompts
    assert f"Frobnicator{TAG} fails unless the cache is warmed" in bob_prompt
    assert "shared by agent planner, low trust" in bob_prompt  # labelled with its origin
    assert f"Quibble{WORD}" not in bob_prompt  # Alice's private preference stays hers
    assert f"Frobnicator{TAG} fails" not in globex_prompt  # another tenant sees nothing

    conn = await asyncpg.connect(pg_db_url)
    try:
        shared = [
            r["content"]
            for r in await conn.fetch(
                "SELECT content, tenant_id FROM memories WHERE user_id = 'agents:shared'"
            )
        ]
        rows = await conn.fetch(
            "SELECT tenant_id, provenance->>'agent_id' AS agent, provenance->>'trust' AS trust"
            " FROM memories WHERE user_id = 'agents:shared' AND content LIKE $1",
            f"%Frobnicator{TAG}%",
        )
    finally:
        await conn.close()
    assert [(r["tenant_id"], r["agent"], r["trust"]) for r in rows] == [("acme", "planner", "low")]
    assert all(f"Quibble{WORD}" not in c and f"Gronk{TAG}" not in c for c in shared)


async def test_a_query_search_pages_end_at_the_ranked_depth(
    server: LangGraphServer, pg_db_url: str, tmp_path: Path, embedding_model_dir: Path
) -> None:
    """One request cannot make the server rank thousands of memories (sec3 finding 4): a page
    with a query past `MAX_RANKED` is empty, as the end of the results; listing goes on."""
    from memory.governed_store import MAX_RANKED
    from memory.settings import Settings
    from memory.storage.store import open_store
    from memory.types import Category, NewMemory, Origin

    deep = Scope("acme", f"deep-{TAG}")
    items = [NewMemory(f"Note {i}: I talked about coffee on day {i} with friend {i % 37}",
                       category=Category.FACT, origin=Origin.EXPLICIT, importance=0.5,
                       confidence=0.8) for i in range(MAX_RANKED + 60)]  # fmt: skip
    settings = Settings(
        database_url=pg_db_url,
        data_dir=tmp_path,
        embedding_model_dir=embedding_model_dir,
        chroma_prefix=f"seed{TAG}",
    )
    async with open_store(settings) as seeder:
        await seeder.write_many(deep, items)
    client = _client(server, deep)

    async def page(offset: int, query: str | None = "what did I say about coffee") -> int:
        found = await client.store.search_items(MEM, query=query, limit=100, offset=offset)
        return len(found["items"])

    assert await page(MAX_RANKED - 100) == 100
    assert await page(MAX_RANKED - 50) == 50  # short: the ranked depth ends here
    assert await page(MAX_RANKED) == 0
    assert await page(10_000) == 0
    assert await page(MAX_RANKED, query=None) == 60  # listing by recency pages on
