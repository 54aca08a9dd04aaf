"""The limits a hosted service needs, through the real server with auth on.

`langgraph dev` with token auth, Postgres, a Chroma server and the stub model, started with
small limits in its environment: a user over a rate or quota gets 429 with `Retry-After` (whole
seconds) and a detail naming the limit, before the server records anything; another user is
untouched; the next request after the wait is served. Also: validly signed tokens with hostile
claim types are refused, an inspector cookie is dead after signing out (and after signing out
everywhere), and concurrent turns of large-pixel images do not multiply the server's memory.
"""

from __future__ import annotations

import asyncio
import io
import json
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from PIL import Image

from agent.auth_tokens import mint_token
from agent.inspector.session import COOKIE, csrf_token
from memory.types import Scope
from tests.conftest import LangGraphFactory
from tests.support.chroma_server import ChromaServer
from tests.support.images import b64
from tests.support.langgraph_server import LangGraphServer
from tests.support.raw_tokens import NOW, Raw, claims, signed
from tests.support.secured import start_secured_server
from tests.support.stub_llm import StubLLM

pytestmark = pytest.mark.e2e

SECRET = "limits-secret-" + uuid.uuid4().hex
TAG = uuid.uuid4().hex[:8]
RUNS_PER_MINUTE = 4  # one every 15 s after a burst of 4
THREADS_PER_MINUTE = 6  # one every 10 s after a burst of 6
WRITES_PER_MINUTE = 10
SEARCHES_PER_MINUTE = 6
QUOTA_THREADS = 4
QUOTA_MEMORIES = 3


def _user(name: str) -> Scope:
    return Scope("acme", f"{name}{TAG}")


@pytest.fixture(scope="module")
def serve(
    langgraph_factory: LangGraphFactory,
    pg_db_url: str,
    _chroma_session: ChromaServer,
    tmp_path_factory: pytest.TempPathFactory,
    _stub_session: StubLLM,
) -> Callable[..., LangGraphServer]:
    """Start a server with token auth (`SECRET`) and `env` added, e.g. small limits."""
    _chroma_session.start()

    def start(n_jobs: int | None = None, **env: str) -> LangGraphServer:
        data_dir = tmp_path_factory.mktemp("limits")
        return start_secured_server(langgraph_factory, pg_db_url, data_dir, _stub_session,
                                    _chroma_session, SECRET, n_jobs=n_jobs, **env)  # fmt: skip

    return start


@pytest.fixture(scope="module")
def server(serve: Callable[..., LangGraphServer]) -> LangGraphServer:
    return serve(
        MEMORY_RATE_LIMIT_RUNS_PER_MINUTE=str(RUNS_PER_MINUTE),
        MEMORY_RATE_LIMIT_THREADS_PER_MINUTE=str(THREADS_PER_MINUTE),
        MEMORY_RATE_LIMIT_WRITES_PER_MINUTE=str(WRITES_PER_MINUTE),
        MEMORY_RATE_LIMIT_SEARCHES_PER_MINUTE=str(SEARCHES_PER_MINUTE),
        MEMORY_QUOTA_THREADS=str(QUOTA_THREADS), MEMORY_QUOTA_MEMORIES=str(QUOTA_MEMORIES),
    )  # fmt: skip


@pytest.fixture
async def http(server: LangGraphServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server.url, timeout=120) as client:
        yield client


def _auth(scope: Scope) -> dict[str, str]:
    return {"Authorization": f"Bearer {mint_token(scope, SECRET)}"}


def _retry_after(resp: httpx.Response, most: int) -> int:
    """The 429's `Retry-After`: whole seconds, within what the limit allows."""
    assert resp.status_code == 429, (resp.status_code, resp.text)
    value = resp.headers["retry-after"]
    assert value.isdigit() and 1 <= int(value) <= most, value
    return int(value)


async def _new_thread(http: httpx.AsyncClient, who: Scope) -> httpx.Response:
    return await http.post("/threads", json={}, headers=_auth(who))


async def test_threads_over_the_quota_then_the_rate_get_429(http: httpx.AsyncClient) -> None:
    mallory, bystander = _user("tmallory"), _user("tbystander")
    made = [await _new_thread(http, mallory) for _ in range(QUOTA_THREADS)]
    assert [r.status_code for r in made] == [200] * QUOTA_THREADS
    # Over the quota: refused, with the setting named; each refusal still costs a token.
    for _ in range(THREADS_PER_MINUTE - QUOTA_THREADS):
        full = await _new_thread(http, mallory)
        _retry_after(full, 3600)
        assert "thread quota" in full.json()["detail"] and "MEMORY_QUOTA_THREADS" in full.text
    # Over the rate: refused before the quota is even counted, told when to come back.
    fast = await _new_thread(http, mallory)
    wait = _retry_after(fast, 60 // THREADS_PER_MINUTE)
    assert "rate limit" in fast.json()["detail"]
    assert "MEMORY_RATE_LIMIT_THREADS_PER_MINUTE" in fast.json()["detail"]
    # The same request under another id of the client's choosing is the same user.
    spoof = await http.post("/threads", json={"metadata": {"owner": "someone-else"}},
                            headers=_auth(mallory))  # fmt: skip
    assert spoof.status_code == 429
    assert (await _new_thread(http, bystander)).status_code == 200  # others are not limited
    # Deleting a thread makes room; after the wait the next one is served.
    gone = await http.delete(f"/threads/{made[0].json()['thread_id']}", headers=_auth(mallory))
    assert gone.status_code in (200, 204), gone.text
    await asyncio.sleep(wait + 0.5)
    assert (await _new_thread(http, mallory)).status_code == 200


async def _start_run(http: httpx.AsyncClient, who: Scope, thread: str, text: str) -> httpx.Response:
    body = {"assistant_id": "agent", "multitask_strategy": "enqueue",
            "input": {"messages": [{"role": "user", "content": text}]}}  # fmt: skip
    return await http.post(f"/threads/{thread}/runs", json=body, headers=_auth(who))


async def test_runs_over_the_rate_get_429_then_are_served_after_the_wait(
    http: httpx.AsyncClient, stub_llm: StubLLM
) -> None:
    runner, bystander = _user("rrunner"), _user("rbystander")
    thread = (await _new_thread(http, runner)).json()["thread_id"]
    other = (await _new_thread(http, bystander)).json()["thread_id"]
    started = [await _start_run(http, runner, thread, f"hello {i}") for i in range(RUNS_PER_MINUTE)]
    assert [r.status_code for r in started] == [200] * RUNS_PER_MINUTE, started[-1].text
    refused = await _start_run(http, runner, thread, "one more")
    wait = _retry_after(refused, 60 // RUNS_PER_MINUTE)
    detail = refused.json()["detail"]
    assert "rate limit" in detail and "MEMORY_RATE_LIMIT_RUNS_PER_MINUTE" in detail
    # Refused before the server recorded it: the thread holds only the admitted runs.
    runs = await http.get(f"/threads/{thread}/runs", headers=_auth(runner))
    assert len(runs.json()) == RUNS_PER_MINUTE
    # A wait-for-result run and a stateless one are the same door.
    body = {"assistant_id": "agent", "input": {"messages": [{"role": "user", "content": "x"}]}}
    for path in (f"/threads/{thread}/runs/wait", f"/threads/{thread}/runs/stream"):
        assert (await http.post(path, json=body, headers=_auth(runner))).status_code == 429
    assert (await _start_run(http, bystander, other, "hi")).status_code == 200
    await asyncio.sleep(wait + 0.5)
    assert (await _start_run(http, runner, thread, "after the wait")).status_code == 200


FACTS = [
    "My sister lives in Porto and teaches chemistry.",
    "I keep bees on the roof of my building.",
    "I prefer green tea over coffee in the morning.",
    "My favourite programming language is Rust.",
    "I am learning Icelandic for a trip next summer.",
    "I play the cello in an amateur orchestra on Tuesdays.",
]


async def _count(pg_db_url: str, who: Scope, sql: str) -> int:
    conn = await asyncpg.connect(pg_db_url)
    try:
        return int(await conn.fetchval(sql, who.tenant_id, who.user_id))
    finally:
        await conn.close()


_KEPT = ("SELECT count(*) FROM memories WHERE tenant_id = $1 AND user_id = $2"
         " AND status IN ('active', 'pending_approval')")  # fmt: skip


async def _put(http: httpx.AsyncClient, who: Scope, key: str, text: str | None) -> httpx.Response:
    value = None if text is None else {"content": text}
    body = {"namespace": ["memories"], "key": key, "value": value}
    return await http.put("/store/items", json=body, headers=_auth(who))


async def _fill(http: httpx.AsyncClient, pg_db_url: str, who: Scope) -> int:
    """Put facts until the user holds the quota; how many puts that took (the gate may drop)."""
    for attempt, fact in enumerate(FACTS, start=1):
        resp = await _put(http, who, f"k{attempt}", fact)
        assert resp.status_code in (200, 204), resp.text
        if await _count(pg_db_url, who, _KEPT) == QUOTA_MEMORIES:
            return attempt
    raise AssertionError("the gate kept too few of the facts to fill the quota")


async def test_store_writes_over_the_quota_then_the_rate_get_429(
    http: httpx.AsyncClient, server: LangGraphServer, pg_db_url: str, stub_llm: StubLLM
) -> None:
    writer, bystander = _user("swriter"), _user("sbystander")
    spent = await _fill(http, pg_db_url, writer)
    full = await _put(http, writer, "k9", "I collect vintage fountain pens.")
    _retry_after(full, 3600)
    assert "memory quota full" in full.json()["detail"]
    assert "MEMORY_QUOTA_MEMORIES" in full.json()["detail"]
    for _ in range(WRITES_PER_MINUTE - spent - 1):
        assert (await _put(http, writer, "k9", "I collect vintage pens.")).status_code == 429
    fast = await _put(http, writer, "k9", "I collect vintage pens.")
    _retry_after(fast, 60 // WRITES_PER_MINUTE)
    assert "rate limit" in fast.json()["detail"]
    # An edit through the memory API is a write too, from the same bucket.
    listed = await http.get("/memory/memories", headers=_auth(writer))
    some = listed.json()["memories"][0]["id"]
    edit = await http.patch(f"/memory/memories/{some}", json={"content": "I keep two hives."},
                            headers=_auth(writer))  # fmt: skip
    _retry_after(edit, 60 // WRITES_PER_MINUTE)
    assert "MEMORY_RATE_LIMIT_WRITES_PER_MINUTE" in edit.json()["detail"]
    assert await _count(pg_db_url, writer, _KEPT) == QUOTA_MEMORIES
    # Deleting is never limited: a user over every limit can still make room.
    gone = await http.request("DELETE", "/store/items", json={"namespace": ["memories"],
                              "key": f"k{spent}"}, headers=_auth(writer))  # fmt: skip
    assert gone.status_code in (200, 204), gone.text
    assert await _count(pg_db_url, writer, _KEPT) == QUOTA_MEMORIES - 1
    assert (await _put(http, bystander, "k0", FACTS[0])).status_code in (200, 204)

    # A turn of a user whose quota is full still answers; its memory is dropped, audited.
    full_user = _user("sturn")
    await _fill(http, pg_db_url, full_user)
    stub_llm.script("Noted, aisle seats it is.")
    thread = (await _new_thread(http, full_user)).json()["thread_id"]
    said = [{"role": "user", "content": "I prefer aisle seats on long flights."}]
    body = {"assistant_id": "agent", "input": {"messages": said}}
    out = await http.post(f"/threads/{thread}/runs/wait", json=body, headers=_auth(full_user))
    assert out.status_code == 200 and "__error__" not in out.json(), out.text
    assert await _count(pg_db_url, full_user, _KEPT) == QUOTA_MEMORIES
    drops = await _count(pg_db_url, full_user, "SELECT count(*) FROM memory_events WHERE"
                         " tenant_id = $1 AND user_id = $2 AND event = 'gate_drop'"
                         " AND reason LIKE 'memory quota full%'")  # fmt: skip
    assert drops >= 1


HOSTILE = {
    "exp string": claims(exp=str(NOW + 3600), sub="tokenmallory"),
    "exp far-future string": claims(exp="99999999999", sub="tokenmallory"),
    "exp NaN": claims(exp=Raw("NaN"), sub="tokenmallory"),
    "exp 1e400": claims(exp=Raw("1e400"), sub="tokenmallory"),
    "exp 400 digits": claims(exp=Raw("9" * 400), sub="tokenmallory"),
    "iat true": claims(iat=True, sub="tokenmallory"),
    "nbf string": claims(nbf=str(NOW), sub="tokenmallory"),
    "sub number": claims(sub=4242),
    "tenant list": claims(tenant=["acme"], sub="tokenmallory"),
    "roles nested": claims(roles=[["memory:admin"]], sub="tokenmallory"),
}
HOSTILE_HEADERS = {
    "typ other": '{"alg":"HS256","typ":"at+jwt"}',
    "crit": '{"alg":"HS256","typ":"JWT","crit":["exp"]}',
    "jku": '{"alg":"HS256","jku":"http://127.0.0.1:9/keys.json"}',
}


async def test_signed_tokens_with_hostile_claims_are_refused(http: httpx.AsyncClient) -> None:
    tokens = {name: signed(p, secret=SECRET) for name, p in HOSTILE.items()}
    good = claims(exp=NOW + 3600, sub="tokenmallory")
    tokens |= {name: signed(good, secret=SECRET, header=h) for name, h in HOSTILE_HEADERS.items()}
    for name, token in tokens.items():
        bearer = {"Authorization": f"Bearer {token}"}
        search = await http.post("/threads/search", json={}, headers=bearer)
        assert search.status_code == 401, (name, search.status_code)
        mine = await http.get("/memory/memories", headers=bearer)
        assert mine.status_code == 401, (name, mine.status_code)
    control = {"Authorization": f"Bearer {signed(good, secret=SECRET)}"}
    assert (await http.post("/threads/search", json={}, headers=control)).status_code == 200


async def _sign_in(server: LangGraphServer, token: str) -> str:
    async with httpx.AsyncClient(base_url=server.url, timeout=60) as browser:
        resp = await browser.post("/memory/ui/login", data={"token": token})
    assert resp.status_code == 303, resp.text
    return resp.cookies[COOKIE]


async def _sign_out(server: LangGraphServer, cookie: str, *, everywhere: bool = False) -> None:
    form = {"csrf": csrf_token(cookie, SECRET), **({"everywhere": "1"} if everywhere else {})}
    async with httpx.AsyncClient(base_url=server.url, timeout=60) as browser:
        resp = await browser.post("/memory/ui/logout", data=form,
                                  headers={"Cookie": f"{COOKIE}={cookie}"})  # fmt: skip
    assert resp.status_code == 303 and resp.headers["location"] == "/memory/ui/login"


async def _reads(http: httpx.AsyncClient, cookie: str) -> list[int]:
    jar = {"Cookie": f"{COOKIE}={cookie}"}
    page = await http.get("/memory/ui", headers=jar)
    api = await http.get("/memory/export", headers=jar)
    listed = await http.get("/memory/memories", headers=jar)
    return [page.status_code, api.status_code, listed.status_code]


async def test_a_cookie_is_dead_after_signing_out(
    http: httpx.AsyncClient, server: LangGraphServer
) -> None:
    reader, other = _user("ireader"), _user("iother")
    token = mint_token(reader, SECRET, ttl_s=3600)
    cookie = await _sign_in(server, token)
    assert await _reads(http, cookie) == [200, 200, 200]
    await _sign_out(server, cookie)
    assert await _reads(http, cookie) == [303, 401, 401]  # replayed: nothing is read
    pin = await http.post("/memory/memories/abc/pin", headers={
        "Cookie": f"{COOKIE}={cookie}", "X-CSRF-Token": csrf_token(cookie, SECRET)})  # fmt: skip
    assert pin.status_code == 401

    # Sign out everywhere: every browser's cookie dies, the one used and the others.
    first, second = await _sign_in(server, token), await _sign_in(server, token)
    bystander = await _sign_in(server, mint_token(other, SECRET))
    await _sign_out(server, first, everywhere=True)
    assert await _reads(http, second) == [303, 401, 401]
    assert await _reads(http, bystander) == [200, 200, 200]  # another user's session stands

    # Forged cookies around a live session: each part must be what the server issued.
    live = await _sign_in(server, token)
    session_id, _, live_token = live.partition(".")
    flipped = ("A" if session_id[0] != "A" else "B") + session_id[1:]
    forged = [
        token,  # a bare token: what the cookie used to be
        f"{flipped}.{live_token}",  # a made-up session id
        f"{session_id}.{mint_token(other, SECRET)}",  # the session, another user's token
        f"{session_id}.{mint_token(reader, 'another-secret-of-enough-length')}",
        f"{session_id}",
        f"{session_id}.{live_token}.extra",
        f"{session_id.lower()}.{live_token}",
    ]
    for value in forged:
        assert (await _reads(http, value))[1:] == [401, 401], value
    assert await _reads(http, live) == [200, 200, 200]


# --- image pixels in flight ---------------------------------------------------------------------

SIDE = 7_000  # 49 megapixels, as in the issue; a one-bit PNG of one colour is ~6 KB


def _bomb(shade: int) -> str:
    image = Image.new("1", (SIDE, SIDE), shade % 2)
    image.putpixel((shade, shade), 1 - shade % 2)  # a distinct file per image
    buf = io.BytesIO()
    image.save(buf, "PNG", optimize=True)
    return b64(buf.getvalue())


@pytest.fixture(scope="module")
def image_server(serve: Callable[..., LangGraphServer]) -> LangGraphServer:
    # Several runs at once, as a deployment serves them (the dev default is one at a time).
    return serve(n_jobs=4, MEMORY_RATE_LIMIT_RUNS_PER_MINUTE="off")


def _tree(pid: int) -> list[int]:
    """`pid` and its descendants (the server may run CPU work in worker processes)."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        found.append(todo.pop())
        todo += parents.get(found[-1], [])
    return found


def _peak_rss_mb(server: LangGraphServer) -> float:
    """The largest peak resident memory (VmHWM) of the server's processes so far, in MB."""
    assert server.proc is not None
    peaks = [0.0]
    for pid in _tree(server.proc.pid):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                peaks.append(int(line.split()[1]) / 1024)
    return max(peaks)


async def test_concurrent_large_pixel_images_are_bounded(
    image_server: LangGraphServer, stub_llm: StubLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    sender = _user("pixels")
    async with httpx.AsyncClient(base_url=image_server.url, timeout=300) as http:
        # Warm the image path (Pillow, imagehash/scipy) so the peak below is the pixels'.
        small = Image.new("RGB", (64, 64), (10, 200, 10))
        buf = io.BytesIO()
        small.save(buf, "PNG")
        green = {"type": "image", "base64": b64(buf.getvalue()), "mime_type": "image/png"}
        warm = [{"type": "text", "text": "a green square"}, green]
        await _turn(http, sender, warm)
        before = _peak_rss_mb(image_server)
        turns = [
            [{"type": "text", "text": f"my scans, batch {t}"}]
            + [
                {"type": "image", "base64": _bomb(4 * t + i), "mime_type": "image/png"}
                for i in range(4)
            ]  # fmt: skip
            for t in range(3)
        ]
        uploaded = sum(len(json.dumps(t)) for t in turns)
        outs = await asyncio.gather(*(_turn(http, sender, t) for t in turns))
        grown = _peak_rss_mb(image_server) - before
    replies = [json.dumps(o) for o in outs]
    busy = [r for r in replies if "still being read" in r]
    with capsys.disabled():
        print(f"\n[pixels] 3 turns x 4 images of {SIDE}x{SIDE}, {uploaded:,} bytes uploaded: "
              f"peak RSS grew by {grown:.0f} MB; {len(busy)} turn(s) told to resend")  # fmt: skip
    assert busy, replies  # at most one 49-megapixel image of this user is decoded at a time
    # Measured (2-core machine): 2,688 MB before the budget; 632-1,017 MB with it, over three
    # runs (freed pixel memory of different worker threads is not always returned at once).
    assert grown < 1_500, grown


async def _turn(http: httpx.AsyncClient, who: Scope, content: Any) -> Any:
    thread = (await http.post("/threads", json={}, headers=_auth(who))).json()["thread_id"]
    body = {"assistant_id": "agent", "input": {"messages": [{"role": "user", "content": content}]}}
    resp = await http.post(f"/threads/{thread}/runs/wait", json=body, headers=_auth(who))
    assert resp.status_code == 200, resp.text
    return resp.json()


async def test_mcp_remember_shares_the_write_rate(server: LangGraphServer) -> None:
    """A flood of `remember` calls is a flood of writes: the same bucket as store puts."""
    import httpx2
    from mcp.client.client import Client
    from mcp.client.streamable_http import streamable_http_client

    from tests.support.mcp_client import text_of

    who = _user("mcpwriter")
    results = []
    async with httpx2.AsyncClient(headers=_auth(who), timeout=60) as http2:
        transport = streamable_http_client(f"{server.url}/memory/mcp", http_client=http2)
        async with Client(transport) as client:
            for n in range(WRITES_PER_MINUTE + 1):
                text = f"I keep {n + 2} beehives at the allotment."
                results.append(await client.call_tool("remember", {"text": text}))
    assert not any(r.is_error for r in results[:WRITES_PER_MINUTE]), [text_of(r) for r in results]
    assert results[-1].is_error and "rate limit" in text_of(results[-1])
    assert "MEMORY_RATE_LIMIT_WRITES_PER_MINUTE" in text_of(results[-1])


async def test_searches_share_one_rate_and_get_429(server: LangGraphServer) -> None:
    """Each search ranks the user's memories on the server: store searches, memory searches
    and the MCP `recall` tool come out of one per-user bucket (sec3 finding 4)."""
    import httpx2
    from mcp.client.client import Client
    from mcp.client.streamable_http import streamable_http_client

    from tests.support.mcp_client import text_of

    searcher, bystander = _user("searcher"), _user("sbystander2")
    body = {"namespace_prefix": [], "query": "what do I like", "limit": 10}
    async with httpx.AsyncClient(base_url=server.url, timeout=120) as http:
        for _ in range(SEARCHES_PER_MINUTE - 2):
            found = await http.post("/store/items/search", json=body, headers=_auth(searcher))
            assert found.status_code == 200, found.text
        memory = await http.get("/memory/memories/search", params={"q": "what do I like"},
                                headers=_auth(searcher))  # fmt: skip
        assert memory.status_code == 200, memory.text
        async with httpx2.AsyncClient(headers=_auth(searcher), timeout=60) as http2:
            transport = streamable_http_client(f"{server.url}/memory/mcp", http_client=http2)
            async with Client(transport) as client:
                ok = await client.call_tool("recall", {"query": "what do I like"})
                over = await client.call_tool("recall", {"query": "what do I like"})
        assert not ok.is_error, text_of(ok)
        assert over.is_error and "MEMORY_RATE_LIMIT_SEARCHES_PER_MINUTE" in text_of(over)
        fast = await http.post("/store/items/search", json=body, headers=_auth(searcher))
        _retry_after(fast, 60 // SEARCHES_PER_MINUTE)
        assert "MEMORY_RATE_LIMIT_SEARCHES_PER_MINUTE" in fast.json()["detail"]
        again = await http.get("/memory/memories/search", params={"q": "tea"},
                               headers=_auth(searcher))  # fmt: skip
        _retry_after(again, 60 // SEARCHES_PER_MINUTE)
        # Listing is no search, and other users are untouched.
        assert (await http.get("/memory/memories", headers=_auth(searcher))).status_code == 200
        other = await http.post("/store/items/search", json=body, headers=_auth(bystander))
        assert other.status_code == 200, other.text
