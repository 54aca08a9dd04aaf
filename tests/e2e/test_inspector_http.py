"""The inspector over plain HTTP against a real `langgraph dev` with auth on.

Routes refuse requests without a valid token (API: 401; pages: a redirect to the sign-in page,
never data), never render another user's memory, refuse cookie-authenticated changes without
the CSRF token or from another origin, escape attacker-controlled memory text, and send a
strict Content-Security-Policy.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from urllib.parse import quote_plus

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.auth_tokens import PERMISSION_ADMIN, PERMISSION_PLATFORM, mint_token
from agent.inspector.session import COOKIE, csrf_token
from memory.types import Scope
from tests.e2e.inspector_world import (
    ADMIN,
    ALICE,
    BOB,
    CAROL,
    ERIN,
    SECRET,
    XSS,
    World,
)
from tests.support.langgraph_server import LangGraphServer

pytestmark = pytest.mark.e2e

UI_PAGES = ["/memory/ui", "/memory/ui/search?q=seat", "/memory/ui/profile",
            "/memory/ui/account", "/memory/ui/admin", "/memory/ui/memories/{seat}",
            "/memory/ui/admin/runs/{run}"]  # fmt: skip
API_CALLS = [
    ("PATCH", "/memory/memories/{seat}"), ("POST", "/memory/memories/{seat}/pin"),
    ("POST", "/memory/memories/{seat}/unpin"), ("POST", "/memory/memories/{pending}/approve"),
    ("POST", "/memory/memories/{pending}/reject"), ("POST", "/memory/memories/{seat}/restore"),
    ("GET", "/memory/memories/{seat}/timeline"), ("GET", "/memory/profile"),
    ("GET", "/memory/admin/runs"), ("GET", "/memory/admin/runs/{run}"),
    ("POST", "/memory/admin/runs/{run}/rollback"), ("GET", "/memory/admin/backlog"),
    ("POST", "/memory/admin/reindex"),
]  # fmt: skip


@pytest.fixture
async def http(inspector_server: LangGraphServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=inspector_server.url, timeout=60) as client:
        yield client


def _fill(path: str, inspector_world: World) -> str:
    return path.format(
        seat=inspector_world.ids["seat"],
        pending=inspector_world.ids["pending"],
        run=inspector_world.run_id,
    )


def _cookie(value: str) -> dict[str, str]:
    return {"Cookie": f"{COOKIE}={value}"}


async def _signed_in(http: httpx.AsyncClient, token: str) -> str:
    """The cookie value a browser gets by signing in with `token` (a server-side session)."""
    # A client of its own: the test's client must not keep (and send) this cookie by itself.
    async with httpx.AsyncClient(base_url=http.base_url, timeout=60) as browser:
        resp = await browser.post("/memory/ui/login", data={"token": token})
    assert resp.status_code == 303, resp.text
    return resp.cookies[COOKIE]


async def test_nothing_without_a_valid_token(
    http: httpx.AsyncClient, inspector_world: World
) -> None:
    forged = mint_token(ALICE, "another-secret-of-enough-length")
    expired = mint_token(ALICE, SECRET, ttl_s=-60)  # past the clock leeway
    for creds in ({}, {"Authorization": f"Bearer {forged}"}, {"Authorization": f"Bearer {expired}"},
                  _cookie(forged), _cookie(expired), _cookie("garbage")):  # fmt: skip
        for path in UI_PAGES:
            resp = await http.get(_fill(path, inspector_world), headers=creds)
            assert resp.status_code in (303, 401), (path, creds, resp.status_code)
            if resp.status_code == 303:
                assert resp.headers["location"].startswith("/memory/ui/login")
            assert "window seats" not in resp.text
        for method, path in API_CALLS:
            resp = await http.request(method, _fill(path, inspector_world), headers=creds, json={})
            assert resp.status_code == 401, (method, path, creds, resp.status_code)


async def test_pages_render_only_the_callers_own_memories(
    http: httpx.AsyncClient, inspector_world: World
) -> None:
    bob = {"Authorization": f"Bearer {inspector_world.token(BOB)}"}
    alice = {"Authorization": f"Bearer {inspector_world.token(ALICE)}"}
    for key in ("seat", "pending", "doomed", "xss"):
        resp = await http.get(f"/memory/ui/memories/{inspector_world.ids[key]}", headers=bob)
        assert resp.status_code == 404, key
    for path in ("/memory/ui", "/memory/ui/search?q=window+seats", "/memory/ui/profile",
                 "/memory/ui?status=pending_approval"):  # fmt: skip
        as_bob = await http.get(path, headers=bob)
        assert as_bob.status_code == 200
        # (the search box echoes the query, so look for the memory's own wording)
        assert "prefer window seats" not in as_bob.text and "0042" not in as_bob.text
    mine = await http.get("/memory/ui", headers=alice)
    assert "window seats" in mine.text and inspector_world.ids["bob_text"] not in mine.text
    bobs = await http.get(f"/memory/ui/memories/{inspector_world.ids['bob']}", headers=alice)
    assert bobs.status_code == 404 and inspector_world.ids["bob_text"] not in bobs.text


async def test_api_actions_never_touch_another_users_memory(
    http: httpx.AsyncClient, inspector_world: World
) -> None:
    bob = {"Authorization": f"Bearer {inspector_world.token(BOB)}"}
    for method, path in API_CALLS[:7]:
        resp = await http.request(
            method, _fill(path, inspector_world), headers=bob, json={"content": "x"}
        )
        assert resp.status_code == 404, (method, path)
    alice = {"Authorization": f"Bearer {inspector_world.token(ALICE)}"}
    seat = (await http.get(f"/memory/memories/{inspector_world.ids['seat']}", headers=alice)).json()
    assert seat["version"] == 1 and not seat["pinned"] and "window" in seat["content"]
    assert {e["event"] for e in seat["audit_trail"]} == {"write"}


async def test_admin_routes_need_the_admin_permission(
    http: httpx.AsyncClient, inspector_world: World
) -> None:
    alice = {"Authorization": f"Bearer {inspector_world.token(ALICE)}"}
    for path in ("/memory/ui/admin", _fill("/memory/ui/admin/runs/{run}", inspector_world)):
        assert (await http.get(path, headers=alice)).status_code == 403
    for method, path in API_CALLS[8:]:
        assert (
            await http.request(method, _fill(path, inspector_world), headers=alice)
        ).status_code == 403
    admin = {"Authorization": f"Bearer {inspector_world.token(ADMIN, admin=True)}"}
    runs = await http.get("/memory/admin/runs", headers=admin)
    assert runs.status_code == 200 and inspector_world.run_id in runs.text
    page = await http.get("/memory/ui/admin", headers=admin)
    assert page.status_code == 200 and inspector_world.run_id in page.text and "<svg" in page.text


async def test_cookie_changes_need_the_csrf_token_and_our_origin(
    http: httpx.AsyncClient, inspector_world: World, inspector_server: LangGraphServer
) -> None:
    token = inspector_world.token(ALICE)
    pin = f"/memory/memories/{inspector_world.ids['doomed']}/pin"
    unpin = f"/memory/memories/{inspector_world.ids['doomed']}/unpin"
    cookie = await _signed_in(http, token)
    good = csrf_token(cookie, SECRET)
    refused = [
        {},
        {"X-CSRF-Token": "wrong"},
        {"X-CSRF-Token": csrf_token(await _signed_in(http, inspector_world.token(BOB)), SECRET)},
        {"X-CSRF-Token": csrf_token(token, SECRET)},  # of the bare token: not this session's
        {"X-CSRF-Token": good, "Origin": "http://evil.example"},
        {"X-CSRF-Token": good, "Origin": inspector_server.url.replace("127.0.0.1", "localhost")},
    ]
    for extra in refused:
        resp = await http.post(pin, headers={**_cookie(cookie), **extra})
        assert resp.status_code == 403, extra
    alice = {"Authorization": f"Bearer {token}"}
    doomed = (
        await http.get(f"/memory/memories/{inspector_world.ids['doomed']}", headers=alice)
    ).json()
    assert not doomed["pinned"]
    ok = await http.post(pin, headers={**_cookie(cookie), "X-CSRF-Token": good,
                                       "Origin": inspector_server.url})  # fmt: skip
    assert ok.status_code == 200 and ok.json()["pinned"] is True
    back = await http.post(unpin, headers={**_cookie(cookie), "X-CSRF-Token": good})
    assert back.status_code == 200 and back.json()["pinned"] is False
    # A cookie never reaches the LangGraph API itself: it is not sent there, nor accepted.
    assert (await http.post("/threads/search", json={}, headers=_cookie(cookie))).status_code == 401


async def test_sign_in_sets_a_strict_httponly_cookie_and_refuses_other_origins(
    http: httpx.AsyncClient, inspector_world: World, inspector_server: LangGraphServer
) -> None:
    token = inspector_world.token(ALICE)
    form = {"token": token, "next": "/memory/ui/profile"}
    foreign = await http.post("/memory/ui/login", data=form,
                              headers={"Origin": "http://evil.example"})  # fmt: skip
    assert foreign.status_code == 403 and "set-cookie" not in foreign.headers
    bad = await http.post("/memory/ui/login", data={"token": "lma1.x.y"})
    assert bad.status_code == 401 and "set-cookie" not in bad.headers
    ok = await http.post("/memory/ui/login", data=form, headers={"Origin": inspector_server.url})
    assert ok.status_code == 303 and ok.headers["location"] == "/memory/ui/profile"
    cookie = ok.headers["set-cookie"]
    # A server-side session id beside the token: signing out can end it (test_limits.py).
    assert re.search(rf"{COOKIE}=[A-Za-z0-9_-]{{43}}\.{re.escape(token)};", cookie), cookie
    for attr in ("HttpOnly", "SameSite=Strict", "Path=/memory"):
        assert attr in cookie


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    target=st.sampled_from(
        [
            "//evil.example",
            "https://evil.example/memory/ui",
            "/\\evil.example",
            "/memory/ui//evil.example",
            "javascript:alert(1)",
            "/threads",
        ]
    )  # fmt: skip
)
async def test_sign_in_never_redirects_off_the_inspector(
    http: httpx.AsyncClient, inspector_world: World, target: str
) -> None:
    resp = await http.post(
        "/memory/ui/login", data={"token": inspector_world.token(ALICE), "next": target}
    )
    assert resp.status_code == 303 and resp.headers["location"] == "/memory/ui"


async def test_memory_text_is_escaped_and_pages_have_a_strict_csp(
    http: httpx.AsyncClient, inspector_world: World
) -> None:
    alice = {"Authorization": f"Bearer {inspector_world.token(ALICE)}"}
    # The last: a message asking two things, echoed in the form and as the question that
    # scored a result, with markup of its own.
    asked = "Which <script>window.__q=1</script> seats do I like? And what quotes and tags?"
    for path in ("/memory/ui", f"/memory/ui/memories/{inspector_world.ids['xss']}",
                 "/memory/ui/search?q=quotes+tags",
                 f"/memory/ui/search?q={quote_plus(asked)}"):  # fmt: skip
        resp = await http.get(path, headers=alice)
        assert resp.status_code == 200
        assert "<script>window" not in resp.text and "onerror=" not in resp.text.replace(
            "onerror=&quot;", ""
        )
        assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in resp.text
        csp = resp.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "default-src 'none'" in csp
        assert "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
        # An inline icon within img-src: browsers ask for no /favicon.ico, which answered 401.
        assert '<link rel="icon" href="data:,">' in resp.text and "img-src 'self' data:" in csp
        # The only scripts are the inspector's own file: nothing inline, nothing external.
        scripts = re.findall(r"<script[^>]*>", resp.text)
        assert scripts == ['<script src="/memory/ui/static/inspector.js" defer>']
    assert XSS not in (await http.get("/memory/ui", headers=alice)).text
    shown = re.findall(r'<p class="question">([^<]*)</p>', resp.text)
    assert shown == [
        "scored as the question “Which &lt;script&gt;window.__q=1&lt;/script&gt; seats do I like?”"
    ]


@pytest.mark.parametrize("bad", ["..%2F..%2Fetc", "a" * 65, "x;drop", "%00", "abc%0A"])
async def test_malformed_ids_are_refused(
    http: httpx.AsyncClient, inspector_world: World, bad: str
) -> None:
    alice = {"Authorization": f"Bearer {inspector_world.token(ALICE)}"}
    for path in (f"/memory/ui/memories/{bad}", f"/memory/memories/{bad}/pin"):
        resp = await http.request("GET" if "/ui/" in path else "POST", path, headers=alice)
        assert resp.status_code in (400, 404), (path, resp.status_code)


async def test_bad_edit_bodies_get_clear_errors(
    http: httpx.AsyncClient, inspector_world: World
) -> None:
    alice = {"Authorization": f"Bearer {inspector_world.token(ALICE)}"}
    path = f"/memory/memories/{inspector_world.ids['old']}"
    for body, status in ((b"not json", 400), (b"[1]", 400), (b"{}", 400),
                         (b'{"content": ""}', 400), (b'{"content": 5}', 400),
                         (b"x" * 70_000, 413)):  # fmt: skip
        resp = await http.patch(path, content=body, headers=alice)
        assert resp.status_code == status, (body[:20], resp.text)
    old = (await http.get(path, headers=alice)).json()
    assert old["version"] == 1 and old["content"] == "I used to live in Porto."


# Any visible latin-1 character an HTTP header can carry (no controls, no edge whitespace).
_HEADER_CHARS = st.characters(min_codepoint=0x21, max_codepoint=0xFF, exclude_categories=("Cc",))


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    cookie=st.text(_HEADER_CHARS.filter(lambda c: c not in ";,"), max_size=80),
    csrf=st.text(_HEADER_CHARS, max_size=60),
    path=st.sampled_from(["/memory/ui", "/memory/memories", "/memory/ui/admin"]),
)  # fmt: skip
async def test_hostile_cookies_and_csrf_values_are_refused_cleanly(
    http: httpx.AsyncClient, inspector_world: World, cookie: str, csrf: str, path: str
) -> None:
    headers = [(b"cookie", f"{COOKIE}={cookie}".encode("latin-1")),
               (b"x-csrf-token", csrf.encode("latin-1"))]  # fmt: skip
    got = await http.get(path, headers=headers)
    assert got.status_code in (303, 401), got.status_code
    posted = await http.post(f"/memory/memories/{inspector_world.ids['seat']}/pin", headers=headers)
    assert posted.status_code in (401, 403), posted.status_code
    form = {"content-type": "application/x-www-form-urlencoded"}
    login = await http.post(
        "/memory/ui/login", content=f"token={cookie}".encode("latin-1"), headers=form
    )
    assert login.status_code == 401 and "set-cookie" not in login.headers


async def test_the_profile_page_shows_rules_and_their_source_memories(
    http: httpx.AsyncClient, inspector_world: World
) -> None:
    carol = {"Authorization": f"Bearer {inspector_world.token(CAROL)}"}
    data = (await http.get("/memory/profile", headers=carol)).json()
    assert any("typescript" in rule.lower() for rule in data["rules"]), data
    field = data["fields"]["code_language"]
    assert field["value"].lower() == "typescript"
    source = field["memory_id"]
    page = await http.get("/memory/ui/profile", headers=carol)
    assert page.status_code == 200 and f"/memory/ui/memories/{source}" in page.text
    as_alice = {"Authorization": f"Bearer {inspector_world.token(ALICE)}"}
    alice = await http.get("/memory/ui/profile", headers=as_alice)
    assert "typescript" not in alice.text.lower()


async def test_export_works_with_the_browser_cookie(
    http: httpx.AsyncClient, inspector_world: World
) -> None:
    cookie = await _signed_in(http, inspector_world.token(ALICE))
    resp = await http.get("/memory/export", headers=_cookie(cookie))
    assert resp.status_code == 200 and resp.json()["user_id"] == "alice"
    assert "window seats" in resp.text and inspector_world.ids["bob_text"] not in resp.text


async def test_admin_sees_the_run_diff_and_the_backlog(
    http: httpx.AsyncClient, inspector_world: World
) -> None:
    admin = {"Authorization": f"Bearer {inspector_world.token(ADMIN, admin=True)}"}
    path = f"/memory/admin/runs/{inspector_world.run_id}"
    shown = await http.get(path, headers=admin)
    (carol,) = shown.json()["users"]
    assert carol["user_id"] == "carol" and carol["status"] == "completed"
    # A tenant's admin sees what the run did to Carol's memories, never what they say: each
    # text's length and a keyed digest (sec3 finding 10).
    created = [c for c in carol["changes"] if c["before"] is None]
    assert created and created[0]["content_hidden"] and created[0]["after"]["content"] is None
    assert created[0]["after"]["content_chars"] > 10 and created[0]["after"]["content_digest"]
    assert "TypeScript" not in shown.text
    absorbed = [c for c in carol["changes"] if c["before"] and "status" in c["changed"]]
    assert absorbed and all(c["before"]["status"] == "active" for c in absorbed)
    assert all(c["before"]["content_digest"] == c["after"]["content_digest"] for c in absorbed)
    page = await http.get(f"/memory/ui/admin/runs/{inspector_world.run_id}", headers=admin)
    assert page.status_code == 200 and "text hidden" in page.text and "TypeScript" not in page.text
    # The memories' owner (an admin too) and the deployment's operator read the text.
    platform = [PERMISSION_ADMIN, PERMISSION_PLATFORM]
    for who, roles in ((CAROL, [PERMISSION_ADMIN]), (Scope("acme", "root"), platform)):
        token = mint_token(who, SECRET, permissions=roles)
        full = await http.get(path, headers={"Authorization": f"Bearer {token}"})
        (theirs,) = full.json()["users"]
        mine = [c for c in theirs["changes"] if c["before"] is None]
        assert "TypeScript" in mine[0]["after"]["content"] and "content_hidden" not in mine[0]
    backlog = (await http.get("/memory/admin/backlog", headers=admin)).json()
    assert backlog["unindexed"] == 0
    reindexed = await http.post("/memory/admin/reindex", headers=admin)
    assert reindexed.status_code == 200 and reindexed.json()["unindexed"] == 0
    other_tenant = {
        "Authorization": f"Bearer {inspector_world.token(Scope('globex', 'ops'), admin=True)}"
    }
    assert (
        await http.get(f"/memory/admin/runs/{inspector_world.run_id}", headers=other_tenant)
    ).status_code == 404
    page = await http.get("/memory/ui/admin", headers=other_tenant)
    assert inspector_world.run_id not in page.text


async def test_a_pending_memory_can_be_rejected_and_then_is_gone(
    http: httpx.AsyncClient, inspector_world: World
) -> None:
    alice = {"Authorization": f"Bearer {inspector_world.token(ALICE)}"}
    path = f"/memory/memories/{inspector_world.ids['pending']}"
    not_pending = await http.post(
        f"/memory/memories/{inspector_world.ids['old']}/approve", headers=alice
    )
    assert not_pending.status_code == 409
    rejected = await http.post(f"{path}/reject", headers=alice)
    assert rejected.status_code == 200 and rejected.json()["receipt"]["memories"] == 1
    assert (await http.get(path, headers=alice)).status_code == 404


async def test_a_short_id_names_the_callers_memory_and_never_anothers(
    http: httpx.AsyncClient, inspector_world: World
) -> None:
    alice = {"Authorization": f"Bearer {inspector_world.token(ALICE)}"}
    bob = {"Authorization": f"Bearer {inspector_world.token(BOB)}"}
    seat = inspector_world.ids["seat"]
    short = seat.replace("-", "")[:8]
    got = await http.get(f"/memory/memories/{short}", headers=alice)
    assert got.status_code == 200 and got.json()["id"] == seat
    assert (await http.get(f"/memory/memories/{short}", headers=bob)).status_code == 404
    assert (await http.post(f"/memory/memories/{short}/pin", headers=bob)).status_code == 404
    pinned = await http.post(f"/memory/memories/{short}/pin", headers=alice)
    assert pinned.status_code == 200 and pinned.json()["pinned"] and pinned.json()["id"] == seat
    unpinned = await http.post(f"/memory/memories/{short}/unpin", headers=alice)
    assert unpinned.status_code == 200 and not unpinned.json()["pinned"]


async def test_a_timeline_shows_what_replaced_what_and_restore_undoes_it(
    http: httpx.AsyncClient, inspector_world: World
) -> None:
    erin = {"Authorization": f"Bearer {inspector_world.token(ERIN)}"}
    bob = {"Authorization": f"Bearer {inspector_world.token(BOB)}"}
    then, now = inspector_world.ids["job_then"], inspector_world.ids["job_now"]
    page = (await http.get(f"/memory/ui/memories/{now}", headers=erin)).text
    timeline = page.split("<h2>Timeline</h2>", 1)[1].split("</table>", 1)[0]
    assert timeline.index("Siemens") < timeline.index("SAP") and "supersede: " in timeline
    assert "/restore" not in page  # the value in force has nothing to restore
    old_page = (await http.get(f"/memory/ui/memories/{then}", headers=erin)).text
    assert f'data-api="/memory/memories/{then}/restore"' in old_page
    steps = (await http.get(f"/memory/memories/{now}/timeline", headers=erin)).json()
    assert [s["status"] for s in steps] == ["superseded", "active"]
    assert steps[0]["valid_to"] and steps[0]["valid_to"] == steps[1]["valid_from"]
    assert (await http.get(f"/memory/memories/{now}/timeline", headers=bob)).status_code == 404
    assert (await http.post(f"/memory/memories/{then}/restore", headers=bob)).status_code == 404
    restored = await http.post(f"/memory/memories/{then}/restore", headers=erin)
    assert restored.status_code == 200, restored.text
    assert restored.json()["status"] == "active" and restored.json()["valid_to"] is None
    wrong = (await http.get(f"/memory/memories/{now}", headers=erin)).json()
    assert wrong["status"] == "superseded" and wrong["superseded_by"] == then
    assert "marked_wrong" in {e["event"] for e in wrong["audit_trail"]}
    again = await http.post(f"/memory/memories/{then}/restore", headers=erin)
    assert again.status_code == 409 and "only a value that an update replaced" in again.text
