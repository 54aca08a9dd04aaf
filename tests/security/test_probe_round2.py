"""Round-two probes: hostile variants the first fixes of issue 42 did not cover.

- A run can create its own thread (`if_not_exists: "create"` on a thread id of the client's
  choosing, or a stateless run kept with `on_completion: "keep"`): that thread must count
  against the thread quota and rate like `POST /threads`, through the real server with auth on.
- An edit through the memory API (`PATCH /memory/memories/{id}`) may not grow what the user
  keeps past the byte quota: a small memory edited to 20,000 characters is a 429 like a put.
- A message's `id` and `name` (and any `*_id` key a client adds) are chosen by the client: a
  secret put there is redacted like text at the run door and in the thread's state.
- A secret pasted as JSON/JS unicode escapes (`\\u0073\\u006b…`) or HTML numeric character
  references (`&#115;&#107;…`, `&#x73;…`) is redacted like the other encodings.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import asyncpg
import httpx
import pytest

from agent.auth_tokens import mint_token
from memory.gating.privacy import PrivacyFilter
from memory.types import Scope
from tests.conftest import LangGraphFactory
from tests.support.chroma_server import ChromaServer
from tests.support.langgraph_server import LangGraphServer
from tests.support.secured import start_secured_server
from tests.support.stub_llm import StubLLM

SECRET = "probe2-secret-" + uuid.uuid4().hex
TAG = uuid.uuid4().hex[:8]
QUOTA_THREADS = 2
QUOTA_BYTES = 2_000
KEY = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
AWS = "AKIAIOSFODNN7EXAMPLE"


def _user(name: str) -> Scope:
    return Scope("acme", f"{name}{TAG}")


def _auth(scope: Scope) -> dict[str, str]:
    return {"Authorization": f"Bearer {mint_token(scope, SECRET)}"}


@pytest.fixture(scope="module")
def server(
    langgraph_factory: LangGraphFactory,
    pg_db_url: str,
    _chroma_session: ChromaServer,
    tmp_path_factory: pytest.TempPathFactory,
    _stub_session: StubLLM,
) -> LangGraphServer:
    _chroma_session.start()
    return start_secured_server(
        langgraph_factory, pg_db_url, tmp_path_factory.mktemp("probe2"), _stub_session,
        _chroma_session, SECRET, MEMORY_QUOTA_THREADS=str(QUOTA_THREADS),
        MEMORY_QUOTA_BYTES=str(QUOTA_BYTES),
        MEMORY_RATE_LIMIT_THREADS_PER_MINUTE="1000", MEMORY_RATE_LIMIT_RUNS_PER_MINUTE="1000",
    )  # fmt: skip


@pytest.fixture
async def http(server: LangGraphServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server.url, timeout=120) as client:
        yield client


def _run(**extra: object) -> dict[str, object]:
    return {"assistant_id": "agent", "input": {"messages": [{"role": "user", "content": "hi"}]},
            **extra}  # fmt: skip


async def _threads(http: httpx.AsyncClient, who: Scope) -> int:
    found = await http.post("/threads/search", json={"limit": 100}, headers=_auth(who))
    assert found.status_code == 200, found.text
    return len(found.json())


@pytest.mark.e2e
async def test_threads_made_by_runs_count_against_the_thread_quota(
    http: httpx.AsyncClient, stub_llm: StubLLM
) -> None:
    mallory = _user("qmallory")
    made = [await http.post("/threads", json={}, headers=_auth(mallory)) for _ in range(2)]
    assert [r.status_code for r in made] == [200] * QUOTA_THREADS
    assert (await http.post("/threads", json={}, headers=_auth(mallory))).status_code == 429
    # The quota is full; a run that creates its thread is a thread creation too.
    for _ in range(3):
        fresh = str(uuid.uuid4())
        create = await http.post(f"/threads/{fresh}/runs", headers=_auth(mallory),
                                 json=_run(if_not_exists="create"))  # fmt: skip
        assert create.status_code == 429, (create.status_code, create.text)
        assert "MEMORY_QUOTA_THREADS" in create.json()["detail"]
        kept = await http.post("/runs", json=_run(on_completion="keep"), headers=_auth(mallory))
        assert kept.status_code in (403, 422, 429), (kept.status_code, kept.text)
    assert await _threads(http, mallory) == QUOTA_THREADS
    # Running on a thread the user already has is no new thread: still served.
    mine = made[0].json()["thread_id"]
    again = await http.post(f"/threads/{mine}/runs/wait", headers=_auth(mallory),
                            json=_run(if_not_exists="create"))  # fmt: skip
    assert again.status_code == 200, again.text
    # A temporary stateless run (the default: its thread is deleted) is still served.
    temporary = await http.post("/runs/wait", json=_run(), headers=_auth(mallory))
    assert temporary.status_code == 200, temporary.text
    assert await _threads(http, mallory) == QUOTA_THREADS
    # Deleting makes room, and then a run may create the thread.
    gone = await http.delete(f"/threads/{mine}", headers=_auth(mallory))
    assert gone.status_code in (200, 204), gone.text
    fresh = str(uuid.uuid4())
    create = await http.post(f"/threads/{fresh}/runs/wait", headers=_auth(mallory),
                             json=_run(if_not_exists="create"))  # fmt: skip
    assert create.status_code == 200, create.text
    assert (await http.post("/threads", json={}, headers=_auth(mallory))).status_code == 429


@pytest.mark.e2e
async def test_an_edit_may_not_grow_memory_past_the_byte_quota(
    http: httpx.AsyncClient, stub_llm: StubLLM
) -> None:
    editor = _user("beditor")
    body = {"namespace": ["memories"], "key": "garden", "value": {"content": "I grow tomatoes."}}
    put = await http.put("/store/items", headers=_auth(editor), json=body)
    assert put.status_code in (200, 204), put.text
    listed = (await http.get("/memory/memories", headers=_auth(editor))).json()["memories"]
    assert len(listed) == 1, listed
    big = " ".join(f"In bed {i} of my garden I grow tomatoes and basil." for i in range(100))
    assert len(big.encode()) > QUOTA_BYTES
    edit = await http.patch(f"/memory/memories/{listed[0]['id']}", json={"content": big},
                            headers=_auth(editor))  # fmt: skip
    assert edit.status_code == 429, (edit.status_code, edit.text[:300])
    assert "MEMORY_QUOTA_BYTES" in edit.json()["detail"]
    assert edit.headers["retry-after"].isdigit()
    kept = (await http.get("/memory/memories", headers=_auth(editor))).json()["memories"]
    assert [m["content"] for m in kept] == ["I grow tomatoes."]
    # An edit that fits (or shrinks) is served.
    fits = {"content": "I grow tomatoes and basil."}
    small = await http.patch(
        f"/memory/memories/{listed[0]['id']}", json=fits, headers=_auth(editor)
    )
    assert small.status_code == 200, small.text


@pytest.mark.e2e
async def test_secrets_in_client_chosen_ids_and_names_are_redacted(
    http: httpx.AsyncClient, stub_llm: StubLLM
) -> None:
    who = _user("idsecret")
    thread = (await http.post("/threads", json={}, headers=_auth(who))).json()["thread_id"]
    message = {"role": "user", "content": "Hello there, how are you today?", "id": KEY,
               "name": AWS, "source_id": "my password is Hunter2Secret!"}  # fmt: skip
    body = {"assistant_id": "agent", "input": {"messages": [message]}}
    done = await http.post(f"/threads/{thread}/runs/wait", headers=_auth(who), json=body)
    assert done.status_code == 200, done.text
    state = await http.get(f"/threads/{thread}/state", headers=_auth(who))
    runs = await http.get(f"/threads/{thread}/runs", headers=_auth(who))
    history = await http.post(f"/threads/{thread}/history", json={}, headers=_auth(who))
    for resp in (done, state, runs, history):
        assert resp.status_code == 200, resp.text
        for secret in (KEY, AWS, "Hunter2Secret"):
            assert secret not in resp.text, (secret, resp.request.url)
    assert "Hello there" in state.text


def _json_u(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in text)


@pytest.mark.parametrize(
    "pasted",
    [
        "my api key is " + _json_u(KEY),
        'config: {"openai": "' + _json_u(KEY).upper().replace("\\U", "\\u") + '"}',
        "key " + "".join(f"&#{ord(c)};" for c in KEY),
        "key " + "".join(f"&#x{ord(c):X};" for c in KEY),
        "aws id " + _json_u(AWS),
        # Mixed: only some characters escaped, as a JSON encoder of a hostile writer might.
        "my api key is sk-live-" + _json_u(KEY[8:20]) + KEY[20:],
        "my key is \\u{73}\\u{6b}\\u{2d}\\u{6c}" + _json_u(KEY[4:]).replace("\\u00", "\\x"),
    ],
)
def test_secrets_in_character_escapes_are_redacted(pasted: str) -> None:
    out = PrivacyFilter().redact(pasted).text
    assert "REDACTED" in out, out
    # Nothing of the escaped run survives to be decoded again later.
    assert "\\u00" not in out and "&#" not in out, out


def test_escapes_that_say_no_secret_are_kept() -> None:
    text = "caf\\u00e9 and na&#239;ve r&#233;sum&#xE9; are fine \\u2764\\ufe0f"
    assert PrivacyFilter().redact(text).text == text


@pytest.mark.e2e
async def test_secrets_from_the_model_and_its_tools_stay_out_of_every_record(
    http: httpx.AsyncClient, stub_llm: StubLLM, pg_db_url: str
) -> None:
    """The model repeats a key; its tools carry a card: no record of the turn keeps either."""
    from memory.working.scratchpad_tools import WRITE_TOOL
    from memory.working.task_tools import FINISH_TOOL
    from tests.integration.test_forget import db_hits_conn

    who = _user("modelsecret")
    card = "4929302188501233"
    thread = (await http.post("/threads", json={}, headers=_auth(who))).json()["thread_id"]
    stub_llm.script(
        {"tool_calls": [
            {"name": WRITE_TOOL, "arguments": {"content": f"user key {KEY} card {card}",
                                              "category": "progress"}},
            {"name": FINISH_TOOL, "arguments": {"outcome": f"Booked the hotel, card {card}"}},
        ]},
        f"Done. Your key is {KEY} and the AWS key id {AWS}.",
    )  # fmt: skip
    body = {"assistant_id": "agent", "input": {"messages": [
        {"role": "user", "content": "Please book the hotel for the offsite in May."}]}}  # fmt: skip
    done = await http.post(f"/threads/{thread}/runs/wait", headers=_auth(who), json=body)
    assert done.status_code == 200, done.text
    reads = [
        done,
        await http.get(f"/threads/{thread}", headers=_auth(who)),
        await http.get(f"/threads/{thread}/state", headers=_auth(who)),
        await http.post("/threads/search", json={"limit": 10}, headers=_auth(who)),
        await http.post(f"/threads/{thread}/history", json={}, headers=_auth(who)),
    ]
    for resp in reads:
        assert resp.status_code == 200, resp.text
        for secret in (KEY, AWS, card):
            assert secret not in resp.text, (secret, resp.request.url)
    assert "[REDACTED:" in reads[2].text  # the turn is there, with placeholders
    conn = await asyncpg.connect(pg_db_url)
    try:
        assert await db_hits_conn(conn, [KEY, AWS, card]) == []
    finally:
        await conn.close()


@pytest.mark.e2e
async def test_a_lone_surrogate_in_a_memory_api_body_is_a_clear_400(
    http: httpx.AsyncClient,
) -> None:
    who = _user("surrogate")
    body = b'{"content": "I like \\ud800 swing music"}'
    headers = {**_auth(who), "Content-Type": "application/json"}
    resp = await http.patch(f"/memory/memories/{uuid.uuid4().hex}", content=body, headers=headers)
    assert resp.status_code == 400 and "surrogate" in resp.text, resp.text
