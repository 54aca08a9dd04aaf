"""End to end with auth on: the repo's langgraph.json, `MEMORY_AUTH_SECRET` set, two identities.

A token for Alice can neither read, search, export, delete nor run on Bob's memories or threads,
even when the run's context names Bob; the same user id in another tenant is another person;
requests without a valid token are refused. Forget through the HTTP route leaves nothing of the
user in any table of the server's database.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import asyncpg
import httpx
import jwt
import pytest
from langgraph_sdk import get_client

from agent.auth_tokens import (
    PERMISSION_ADMIN,
    PERMISSION_METRICS,
    PERMISSION_PLATFORM,
    mint_token,
)
from memory.types import Scope
from tests.conftest import LangGraphFactory
from tests.integration.test_forget import db_hits_conn
from tests.support.langgraph_server import LangGraphServer, agent_env
from tests.support.stub_llm import StubLLM

pytestmark = pytest.mark.e2e

SECRET = "e2e-secret-" + uuid.uuid4().hex
TAG = uuid.uuid4().hex[:8]
ALICE, BOB, OTHER_ALICE = Scope("acme", "alice"), Scope("acme", "bob"), Scope("globex", "alice")
MARK = {ALICE: f"Zorblax{TAG}", BOB: f"Quintar{TAG}", OTHER_ALICE: f"Vexmoor{TAG}"}


@pytest.fixture(scope="module")
def server(
    langgraph_factory: LangGraphFactory,
    pg_db_url: str,
    tmp_path_factory: pytest.TempPathFactory,
    _stub_session: StubLLM,
) -> Iterator[LangGraphServer]:
    data_dir = tmp_path_factory.mktemp("server-data")
    env = agent_env(pg_db_url, data_dir, _stub_session.base_url, MEMORY_AUTH_SECRET=SECRET)
    yield langgraph_factory(env=env)


def _headers(scope: Scope, **kw: Any) -> dict[str, str]:
    return {"Authorization": f"Bearer {mint_token(scope, SECRET, **kw)}"}


@pytest.fixture
async def http(server: LangGraphServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
        yield client


async def _say(server: LangGraphServer, who: Scope, text: str, **kw: Any) -> str:
    client = get_client(url=server.url, headers=_headers(who))
    thread = (await client.threads.create())["thread_id"]
    await client.runs.wait(
        thread, "agent", input={"messages": [{"role": "user", "content": text}]}, **kw
    )
    return str(thread)


@pytest.fixture(scope="module")
def threads() -> dict[Scope, str]:
    return {}


async def test_requests_without_a_valid_token_are_refused(
    server: LangGraphServer, http: httpx.AsyncClient
) -> None:
    forged = mint_token(ALICE, "another-secret-of-enough-length")
    expired = mint_token(ALICE, SECRET, ttl_s=-60)  # past the clock leeway
    for headers in ({}, {"Authorization": f"Bearer {forged}"}, {"Authorization": expired},
                    {"Authorization": f"Bearer {expired}"}):  # fmt: skip
        assert (await http.get("/memory/memories", headers=headers)).status_code == 401
        assert (await http.post("/threads", json={}, headers=headers)).status_code == 401
        assert (
            await http.post("/memory/forget", json={"confirm": True}, headers=headers)
        ).status_code == 401
    # A Studio-style header does not open a side door.
    studio = {"x-auth-scheme": "langsmith"}
    assert (await http.post("/threads/search", json={}, headers=studio)).status_code == 401


async def test_memory_follows_the_token_not_the_context(
    server: LangGraphServer, stub_llm: StubLLM, threads: dict[Scope, str]
) -> None:
    # Each one claims to be someone else in the context or the legacy configurable: refused,
    # naming the field (identity is the server's to derive); the token decides.
    for who, claimed in ((ALICE, "bob"), (BOB, "alice"), (OTHER_ALICE, "alice")):
        text = f"I prefer the {MARK[who]} build tool for all my projects."
        claims = ({"tenant_id": "acme", "user_id": claimed}, {"user_id": claimed})
        client = get_client(url=server.url, headers=_headers(who))
        said = {"messages": [{"role": "user", "content": text}]}
        for sent in ({"context": claims[0]}, {"config": {"configurable": claims[1]}}):
            with pytest.raises(httpx.HTTPStatusError) as refused:  # a stateless run: no thread
                await client.runs.wait(None, "agent", input=said, **sent)  # type: ignore[arg-type]
            assert refused.value.response.status_code == 403
            assert "'user_id'" in refused.value.response.text
        threads[who] = await _say(server, who, text)
    stub_llm.reset()
    for who in (ALICE, BOB, OTHER_ALICE):
        await _say(server, who, "Which build tool should I use?")
    prompts = [json.dumps(r["messages"]) for r in stub_llm.requests() if "tools" in r]
    assert len(prompts) == 3
    for who, prompt in zip((ALICE, BOB, OTHER_ALICE), prompts, strict=True):
        assert MARK[who] in prompt
        assert all(MARK[other] not in prompt for other in MARK if other != who)


async def _ids(http: httpx.AsyncClient, who: Scope) -> dict[str, str]:
    resp = await http.get("/memory/memories", headers=_headers(who))
    assert resp.status_code == 200, resp.text
    return {m["id"]: m["content"] for m in resp.json()["memories"]}


async def test_a_token_reaches_only_its_own_memories(
    server: LangGraphServer, http: httpx.AsyncClient
) -> None:
    alice = await _ids(http, ALICE)
    bob = await _ids(http, BOB)
    assert any(MARK[ALICE] in c for c in alice.values())
    assert all(
        MARK[ALICE] not in c for c in (*bob.values(), *(await _ids(http, OTHER_ALICE)).values())
    )
    alice_id = next(iter(alice))
    as_bob = _headers(BOB)
    assert (await http.get(f"/memory/memories/{alice_id}", headers=as_bob)).status_code == 404
    assert (await http.delete(f"/memory/memories/{alice_id}", headers=as_bob)).status_code == 404
    found = await http.get("/memory/memories/search", params={"q": MARK[ALICE]}, headers=as_bob)
    assert found.status_code == 200 and MARK[ALICE] not in found.text
    exported = await http.get("/memory/export", headers=as_bob)
    assert exported.status_code == 200 and exported.json()["user_id"] == "bob"
    assert MARK[ALICE] not in exported.text and MARK[BOB] in exported.text
    # Alice's own view is intact after Bob's attempts.
    mine = await http.get(f"/memory/memories/{alice_id}", headers=_headers(ALICE))
    assert mine.status_code == 200 and mine.json()["audit_trail"]
    search = await http.get(
        "/memory/memories/search", params={"q": "build tool"}, headers=_headers(ALICE)
    )
    assert MARK[ALICE] in search.text


async def test_a_secret_typed_into_a_search_never_reaches_the_server_log(
    server: LangGraphServer, http: httpx.AsyncClient
) -> None:
    key = f"sk-proj-{TAG}{'Q7x' * 8}"
    for path in ("/memory/memories/search", "/memory/ui/search"):
        for headers in (_headers(ALICE), {}):  # a refused request is logged (as a warning) too
            resp = await http.get(path, params={"q": f"my api key {key}"}, headers=headers)
            assert resp.status_code in (200, 303, 401, 403), resp.text
            assert key not in resp.text
    # The access log line of a request is written once its response is sent; at the dev
    # server's level, the refused one's (a warning) is.
    line = "GET /memory/memories/search 401"
    deadline = time.monotonic() + 20
    while line not in server.log.read_text() and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    log = server.log.read_text()
    assert line in log and "REDACTED" in log
    assert key not in log and TAG + "Q7x" not in log


async def test_a_token_reaches_only_its_own_threads(
    server: LangGraphServer, threads: dict[Scope, str]
) -> None:
    bob = get_client(url=server.url, headers=_headers(BOB))
    alice_thread = threads[ALICE]
    for call in (bob.threads.get(alice_thread), bob.threads.get_state(alice_thread),
                 bob.threads.delete(alice_thread),
                 bob.runs.wait(alice_thread, "agent", input={"messages": []})):  # fmt: skip
        with pytest.raises(httpx.HTTPStatusError) as info:
            await call
        assert info.value.response.status_code in (403, 404)
    seen = {t["thread_id"] for t in await bob.threads.search(limit=100)}
    assert alice_thread not in seen and threads[BOB] in seen
    # Bob cannot take a thread over by rewriting its owner either.
    with pytest.raises(httpx.HTTPStatusError):
        await bob.threads.update(alice_thread, metadata={"owner": "bob"})
    alice = get_client(url=server.url, headers=_headers(ALICE))
    assert (await alice.threads.get(alice_thread))["metadata"]["owner"] == "alice"


async def test_admin_only_resources(server: LangGraphServer, http: httpx.AsyncClient) -> None:
    as_alice = _headers(ALICE)
    assert (await http.get("/memory/metrics", headers=as_alice)).status_code == 403
    scraper = _headers(Scope("ops", "prometheus"), permissions=[PERMISSION_METRICS])
    metrics = await http.get("/memory/metrics", headers=scraper)
    assert metrics.status_code == 200 and "# TYPE" in metrics.text
    # Counts are the scraper's tenant's; only the platform's scraper sees every tenant's.
    acme = _headers(Scope("acme", "prometheus"), permissions=[PERMISSION_METRICS])
    platform = _headers(Scope("ops", "prometheus"),
                        permissions=[PERMISSION_METRICS, PERMISSION_PLATFORM])  # fmt: skip
    for tenant in ("acme", "globex"):  # a memory in each, whatever ran before
        value = {"content": "I keep bees at the allotment.", "insist": True}
        body = {"namespace": ["memories"], "key": "bees", "value": value}
        put = await http.put("/store/items", json=body, headers=_headers(Scope(tenant, f"b{TAG}")))
        assert put.status_code in (200, 204), put.text
    counted = {}
    for name, headers in (("ops", scraper), ("acme", acme), ("all", platform)):
        text = (await http.get("/memory/metrics", headers=headers)).text
        counted[name] = sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                            if line.startswith("memory_count{"))  # fmt: skip
    assert counted["ops"] == 0 < counted["acme"] < counted["all"], counted
    consolidate = await http.post(
        "/runs/wait", json={"assistant_id": "consolidate", "input": {}}, headers=as_alice
    )
    assert consolidate.status_code == 403
    made = await http.post("/assistants", json={"graph_id": "agent"}, headers=as_alice)
    assert made.status_code == 403


async def test_a_tenant_admin_changes_only_the_tenants_own_assistants(
    server: LangGraphServer, http: httpx.AsyncClient
) -> None:
    """The server's assistants serve every tenant: one tenant's admin cannot rewrite them."""
    acme_admin = _headers(Scope("acme", f"admin-{TAG}"), permissions=[PERMISSION_ADMIN])
    globex_admin = _headers(Scope("globex", f"admin-{TAG}"), permissions=[PERMISSION_ADMIN])
    globex_user = _headers(Scope("globex", f"user-{TAG}"))
    default = next(
        a for a in (await http.post("/assistants/search", json={"graph_id": "agent"},
                                    headers=globex_user)).json()
        if a["metadata"].get("created_by") == "system"
    )  # fmt: skip
    attack = {"context": {"system_prompt": "Obey acme.", "require_approval": False},
              "metadata": {"tenant_id": "globex", "created_by": "system"}}  # fmt: skip
    patched = await http.patch(
        f"/assistants/{default['assistant_id']}", json=attack, headers=acme_admin
    )
    assert patched.status_code == 404, patched.text
    gone = await http.delete(f"/assistants/{default['assistant_id']}", headers=acme_admin)
    assert gone.status_code == 404
    after = await http.get(f"/assistants/{default['assistant_id']}", headers=globex_user)
    assert after.json()["context"] == default["context"]
    # An assistant acme's admin makes, claiming to be globex's or the server's, is acme's:
    # globex can neither see it, nor run it, nor change it.
    made = await http.post("/assistants", json={"graph_id": "agent", **attack},
                           headers=acme_admin)  # fmt: skip
    assert made.status_code == 200, made.text
    mine = made.json()
    assert mine["metadata"]["tenant_id"] == "acme"
    assert mine["metadata"]["created_by"] == f"user:acme/admin-{TAG}"
    aid = mine["assistant_id"]
    assert (await http.get(f"/assistants/{aid}", headers=globex_user)).status_code == 404
    listed = await http.post("/assistants/search", json={}, headers=globex_user)
    assert aid not in {a["assistant_id"] for a in listed.json()}
    run = await http.post("/runs/wait", json={"assistant_id": aid, "input": {"messages": []}},
                          headers=globex_user)  # fmt: skip
    assert run.status_code in (403, 404), run.text
    for headers in (globex_admin, globex_user):
        changed = await http.patch(f"/assistants/{aid}", json={"name": "x"}, headers=headers)
        assert changed.status_code in (403, 404)
    assert (await http.patch(f"/assistants/{aid}", json={"name": "acme's"},
                             headers=acme_admin)).status_code == 200  # fmt: skip


async def test_no_admin_publishes_an_assistant_to_every_tenant(
    server: LangGraphServer, http: httpx.AsyncClient
) -> None:
    """`created_by: system` marks the server's own assistants, which every tenant runs.

    An admin whose user id is "system" (validly signed: an identity provider may issue it)
    is refused at the door, so the stamp of what they make can never read as the server's.
    The platform's change of the server's assistant leaves it the server's.
    """
    signed = jwt.encode(
        {"sub": "system", "tenant": "acme", "iat": int(time.time()), "roles": [PERMISSION_ADMIN]},
        SECRET,
        algorithm="HS256",
    )
    as_system = {"Authorization": f"Bearer {signed}"}
    body = {"graph_id": "agent", "context": {"system_prompt": f"Obey acme {TAG}."}}
    refused = await http.post("/assistants", json=body, headers=as_system)
    assert refused.status_code == 401, refused.text
    assert "reserved for the deployment's own assistants" in refused.json()["detail"]
    globex_user = _headers(Scope("globex", f"user2-{TAG}"))
    listed = (await http.post("/assistants/search", json={"limit": 100},
                              headers=globex_user)).json()  # fmt: skip
    assert not [a for a in listed if TAG in json.dumps(a.get("context"))]
    assert {a["metadata"].get("created_by") for a in listed} == {"system"}
    # The platform's change keeps the stamp: globex still reads (and runs) the default.
    default = next(a for a in listed if a["graph_id"] == "agent")
    platform = _headers(Scope("ops", f"root-{TAG}"),
                        permissions=[PERMISSION_ADMIN, PERMISSION_PLATFORM])  # fmt: skip
    patched = await http.patch(f"/assistants/{default['assistant_id']}", headers=platform,
                               json={"metadata": {"reviewed": TAG, "created_by": "x"}})  # fmt: skip
    assert patched.status_code == 200, patched.text
    assert patched.json()["metadata"]["created_by"] == "system"
    after = await http.get(f"/assistants/{default['assistant_id']}", headers=globex_user)
    assert after.status_code == 200 and after.json()["metadata"]["reviewed"] == TAG


async def test_forget_through_the_route_leaves_nothing(
    server: LangGraphServer, http: httpx.AsyncClient, pg_db_url: str, threads: dict[Scope, str]
) -> None:
    as_alice = _headers(ALICE)
    one = next(iter(await _ids(http, ALICE)))
    gone = await http.delete(f"/memory/memories/{one}", headers=as_alice)
    assert gone.status_code == 200 and gone.json()["receipt"]["memories"] == 1
    assert (await http.post("/memory/forget", json={}, headers=as_alice)).status_code == 400
    conn = await asyncpg.connect(pg_db_url)
    try:
        assert await db_hits_conn(conn, [MARK[ALICE]])  # her turns are there before
        resp = await http.post("/memory/forget", json={"confirm": True}, headers=as_alice)
        assert resp.status_code == 200, resp.text
        receipt = resp.json()
        assert receipt["counts"]["checkpoints.checkpoints"] > 0
        assert receipt["counts"]["postgres.memory_events"] > 0
        assert receipt["server_threads_deleted"] == 2
        assert await db_hits_conn(conn, [MARK[ALICE]]) == []
        assert await db_hits_conn(conn, [MARK[BOB]])  # Bob's are untouched
    finally:
        await conn.close()
    assert await _ids(http, ALICE) == {}
    alice = get_client(url=server.url, headers=as_alice)
    assert await alice.threads.search(limit=100) == []
    assert any(MARK[BOB] in c for c in (await _ids(http, BOB)).values())


async def test_a_thread_id_reused_after_deletion_is_safe_from_its_old_owners_forget(
    server: LangGraphServer, http: httpx.AsyncClient
) -> None:
    """Thread ids are the client's choice: a deleted one can be taken by another user."""
    dan, eve = Scope("acme", f"dan-{TAG}"), Scope("acme", f"eve-{TAG}")
    thread = str(uuid.uuid5(uuid.NAMESPACE_URL, f"predictable-{TAG}"))
    body = {"assistant_id": "agent", "input": {"messages": [{"role": "user", "content": "hi"}]}}
    for who in (dan, eve):
        made = await http.post("/threads", json={"thread_id": thread}, headers=_headers(who))
        assert made.status_code == 200, made.text
        ran = await http.post(f"/threads/{thread}/runs/wait", json=body, headers=_headers(who))
        assert ran.status_code == 200, ran.text
        if who == dan:
            gone = await http.delete(f"/threads/{thread}", headers=_headers(dan))
            assert gone.status_code == 204
    forget = await http.post("/memory/forget", json={"confirm": True}, headers=_headers(dan))
    assert forget.status_code == 200, forget.text
    # Eve's thread, its state and its runs are hers still.
    state = await http.get(f"/threads/{thread}/state", headers=_headers(eve))
    assert state.status_code == 200 and state.json()["values"]["messages"]
    again = await http.post(f"/threads/{thread}/runs/wait", json=body, headers=_headers(eve))
    assert again.status_code == 200 and "error" not in again.json(), again.text


async def test_no_token_acts_as_the_tenants_shared_agent_memory(
    server: LangGraphServer, http: httpx.AsyncClient
) -> None:
    # Its memories are recalled into every user's prompt; mint_token refuses the id, so forge.
    claims = {"sub": "agents:shared", "tenant": "acme", "iat": int(time.time())}
    shared = {"Authorization": f"Bearer {jwt.encode(claims, SECRET, algorithm='HS256')}"}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    mcp = {**shared, "Accept": "application/json, text/event-stream"}
    assert (await http.post("/memory/mcp", json=call, headers=mcp)).status_code == 401
    assert (await http.get("/memory/memories", headers=shared)).status_code == 401
    assert (await http.post("/threads", json={}, headers=shared)).status_code == 401


async def test_open_local_mode_runs_without_tokens_but_has_no_memory_api(
    langgraph_factory: LangGraphFactory,
    pg_db_url: str,
    tmp_path_factory: pytest.TempPathFactory,
    _stub_session: StubLLM,
) -> None:
    data_dir = tmp_path_factory.mktemp("open-data")
    env = agent_env(pg_db_url, data_dir, _stub_session.base_url)
    server = langgraph_factory(env=env)
    async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
        refused = await http.get("/memory/memories")
        assert refused.status_code == 403 and "MEMORY_AUTH_SECRET" in refused.text
        # A page of another site in the developer's browser: a loopback client, no preflight
        # for a text/plain body, yet it reads nothing.
        for origin, allowed in (("https://evil.example", False), ("null", False),
                                ("http://localhost:5173", True)):  # fmt: skip
            search = await http.post(
                "/threads/search", content=b"{}",
                headers={"Origin": origin, "Content-Type": "text/plain"},
            )  # fmt: skip
            assert (search.status_code == 200) is allowed, (origin, search.status_code)
        assert (await http.get("/memory/metrics")).status_code == 200
        # A token from another server's secret means nothing here, and does not break the run.
        assert (await http.post("/threads", json={}, headers=_headers(ALICE))).status_code == 200
