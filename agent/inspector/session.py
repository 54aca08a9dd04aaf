"""Browser sessions for the memory inspector: a pasted token kept in an HttpOnly cookie.

Why a cookie and not sessionStorage: pages are plain server-rendered links and forms that a
browser loads by navigation, which cannot carry an `Authorization` header; and a token in an
HttpOnly cookie is out of reach of any script, injected or not, while sessionStorage is readable
by every script on the page. The cookie's price is cross-site request forgery, handled here:

- the cookie is `SameSite=Strict` and limited to `Path=/memory`, so it is never sent to the
  LangGraph API (`/threads`, `/runs` ...) and never on a request started by another site;
- every state-changing request (anything but GET/HEAD) authenticated by the cookie must carry
  `X-CSRF-Token`, an HMAC of the session cookie that only pages of this server embed, and an
  `Origin` (when the browser sends one) equal to the server's own; `SameSite` alone does not
  cover another port of the same host, which counts as the same site;
- signing in checks the `Origin` too, so another page cannot sign a browser in as someone else.

This middleware runs before the server's authentication (it is the custom app's middleware): it
turns the cookie into the `Authorization: Bearer` header that `agent/auth.py` verifies, so the
same check decides for a browser and for an API client.

The cookie holds a server-side session id beside the token (`<session id>.<token>`), and a
request is served only while Postgres holds that session (`memory.storage.sessions`): signing
out deletes it, so a copy of the cookie taken before is worth nothing afterwards, on every
worker; "sign out everywhere" ends all of the user's sessions. A session ends with its token
or after `SESSION_MAX_S`, whichever comes first. A bare token in the cookie is refused.

A request that already carries an `Authorization` header is passed on untouched: a cookie never
overrides an explicit credential.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import time
from collections.abc import Awaitable, Callable, MutableMapping
from datetime import UTC, datetime
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from starlette.datastructures import Headers
from starlette.requests import cookie_parser
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response

from agent.auth_tokens import (
    SECRET_ENV,
    TokenClaims,
    TokenError,
    auth_secret,
    mint_token,
    verify_token,
)
from agent.identity import DEFAULT_TENANT
from agent.inspector.render import login_page
from agent.local_mode import local_secret
from agent.resources import get_store
from memory.storage.sessions import end_all_sessions, end_session, open_session, session_live
from memory.types import Scope as MemoryScope
from memory.types import ScopeError

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

COOKIE = "lma_inspector"
CSRF_HEADER = "x-csrf-token"
UI = "/memory/ui"
LOGIN = f"{UI}/login"
LOGOUT = f"{UI}/logout"
STATIC = f"{UI}/static/"
SAFE_METHODS = frozenset({"GET", "HEAD"})
MAX_FORM_BYTES = 16_384  # a token is ~200 bytes; refuse to buffer anything much larger
STATIC_FILES = {"inspector.js": "text/javascript", "inspector.css": "text/css"}
SESSION_MAX_S = 12 * 3600
"""The longest a browser stays signed in, even with a token that never expires: a working day."""
_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{43}")  # secrets.token_urlsafe(32)

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    # same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on its own
    # form posts, which the origin check below must refuse.
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}


def csrf_token(cookie: str, secret: str) -> str:
    """The anti-forgery value of one session: HMAC(secret, cookie), so it dies with the session."""
    digest = hmac.new(secret.encode(), b"inspector-csrf:" + cookie.encode(), hashlib.sha256)
    return base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode("ascii")


def _verified(token: str, secret: str) -> TokenClaims | None:
    """The claims of a valid token, else None (also for text no token can contain)."""
    if not token.isascii():
        # hmac.compare_digest raises on non-ASCII text: refuse it before it gets there.
        return None
    try:
        return verify_token(token, secret)
    except TokenError:
        return None


def _split(cookie: str) -> tuple[str, str] | None:
    """(session id, token) of a cookie of this server, else None (a bare token included)."""
    session_id, _, token = cookie.partition(".")
    if not _SESSION_ID.fullmatch(session_id) or not token:
        return None
    return session_id, token


async def _session(cookie: str, secret: str) -> tuple[str, TokenClaims] | None:
    """The session id and claims of a cookie whose token is valid and session live, else None."""
    parts = _split(cookie) if cookie.isascii() else None
    claims = _verified(parts[1], secret) if parts else None
    if parts is None or claims is None:
        return None
    store = await get_store()
    if not await session_live(store.pool, parts[0], claims.scope):
        return None
    return parts[0], claims


def _matches(sent: str, expected: str) -> bool:
    """Constant-time comparison of a sent CSRF value (any bytes a client chose) with ours."""
    return hmac.compare_digest(sent.encode("utf-8", "replace"), expected.encode("utf-8"))


def _same_origin(headers: Headers) -> bool:
    """False when the browser says the request came from another origin (or from nowhere)."""
    origin = headers.get("origin")
    if origin is None:
        # Browsers send Origin on every cross-origin state-changing request; its absence means
        # a same-origin request from an older browser or a non-browser client.
        return True
    # Host and port only: behind a proxy that ends TLS the server sees http while the browser
    # says https, and one host:port serves one scheme anyway.
    return urlsplit(origin).netloc == headers.get("host", "")


def _cookie_header(value: str, *, max_age: int | None, secure: bool) -> str:
    attrs = [f"{COOKIE}={value}", "Path=/memory", "HttpOnly", "SameSite=Strict"]
    if max_age is not None:
        attrs.append(f"Max-Age={max_age}")
    if secure:
        attrs.append("Secure")
    return "; ".join(attrs)


def _safe_next(value: str | None) -> str:
    # Only paths of the inspector itself: an open redirect would make the login page a
    # phishing tool ("//evil.example" and "/\\evil" are host names to a browser).
    if value and value.startswith(UI) and "//" not in value and "\\" not in value:
        return value
    return UI


class InspectorSession:
    """ASGI middleware: login/logout, static files, cookie → bearer, CSRF and security headers."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Handle the inspector's own paths; pass everything else on (cookie → bearer)."""
        path = scope.get("path", "")
        if scope["type"] != "http" or not path.startswith("/memory/"):
            await self.app(scope, receive, send)
            return
        send = _with_security_headers(send) if path.startswith(UI) else send
        method = scope.get("method", "GET")
        if path == LOGIN:
            await self._login(scope, receive, send, method)
            return
        if path.startswith(STATIC):
            await _static(path[len(STATIC) :], method)(scope, receive, send)
            return
        headers = Headers(scope=scope)
        cookie = cookie_parser(headers.get("cookie", "")).get(COOKIE)
        if path == LOGOUT:
            await self._logout(scope, receive, send, headers, cookie)
            return
        if "authorization" in headers or not cookie:
            bare = not cookie and "authorization" not in headers
            if bare and method in SAFE_METHODS and path.startswith(UI):
                await _to_login(scope, path)(scope, receive, send)
                return
            await self.app(scope, receive, send)
            return
        secret = _secret(scope)
        if secret is None:
            await self.app(scope, receive, send)  # no way to sign it: the server decides
            return
        session = await _session(cookie, secret)
        if session is None:
            # Forged, expired, signed out, or a bare token: no credential at all.
            if method in SAFE_METHODS and path.startswith(UI):
                await _to_login(scope, path, clear=True)(scope, receive, send)
                return
            await self.app(scope, receive, send)  # no credential: the server answers 401
            return
        if method not in SAFE_METHODS:
            sent = headers.get(CSRF_HEADER, "")
            if not _matches(sent, csrf_token(cookie, secret)) or not _same_origin(headers):
                await PlainTextResponse("missing or wrong CSRF token", 403)(scope, receive, send)
                return
        scope = dict(scope)
        scope["headers"] = [
            *[(k, v) for k, v in scope["headers"] if k != b"authorization"],
            (b"authorization", f"Bearer {cookie.partition('.')[2]}".encode("latin-1")),
        ]
        scope["lma_csrf"] = csrf_token(cookie, secret)
        await self.app(scope, receive, send)

    async def _login(self, scope: Scope, receive: Receive, send: Send, method: str) -> None:
        secret = _secret(scope)
        local = auth_secret() is None
        headers = Headers(scope=scope)
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        nxt = _safe_next((query.get("next") or [None])[0])
        if secret is None:
            msg = (
                f"This server has no {SECRET_ENV} and serves only this machine: open the "
                "inspector at http://localhost:PORT, or set the secret and restart the server."
            )
            await HTMLResponse(login_page(nxt, msg), 403)(scope, receive, send)
            return
        if method in SAFE_METHODS:
            await HTMLResponse(login_page(nxt, local=local))(scope, receive, send)
            return
        if method != "POST":
            await PlainTextResponse("method not allowed", 405)(scope, receive, send)
            return
        if not _same_origin(headers):
            await PlainTextResponse("sign-in from another origin refused", 403)(
                scope, receive, send
            )
            return
        body = await _read_body(receive, MAX_FORM_BYTES)
        if body is None:
            await PlainTextResponse("form too large", 413)(scope, receive, send)
            return
        form = parse_qs(body.decode("utf-8", "replace"))
        token = (form.get("token") or [""])[0].strip()
        nxt = _safe_next((form.get("next") or [""])[0])
        if local:
            try:
                chosen = MemoryScope(
                    (form.get("tenant") or [DEFAULT_TENANT])[0].strip() or DEFAULT_TENANT,
                    (form.get("user") or [""])[0].strip(),
                )
            except ScopeError as exc:
                page = login_page(nxt, f"That user name was refused: {exc}", local=True)
                await HTMLResponse(page, 400)(scope, receive, send)
                return
            token = mint_token(chosen, secret, ttl_s=SESSION_MAX_S)
        claims = _verified(token, secret)
        if claims is None:
            # Why it failed (forged, expired, malformed) is not told to whoever pasted it.
            page = login_page(nxt, "That token was refused: it is not valid on this server.")
            await HTMLResponse(page, 401)(scope, receive, send)
            return
        now = int(time.time())
        ends = now + SESSION_MAX_S
        if claims.expires_at is not None:
            ends = min(ends, claims.expires_at)
        store = await get_store()
        session_id = await open_session(store.pool, claims.scope, datetime.fromtimestamp(ends, UTC))
        response = RedirectResponse(nxt, 303)
        secure = scope.get("scheme") == "https"
        value = f"{session_id}.{token}"
        response.headers["set-cookie"] = _cookie_header(
            value, max_age=max(0, ends - now), secure=secure
        )
        await response(scope, receive, send)

    async def _logout(
        self, scope: Scope, receive: Receive, send: Send, headers: Headers, cookie: str | None
    ) -> None:
        secret = _secret(scope)
        if scope.get("method") != "POST":
            await PlainTextResponse("method not allowed", 405)(scope, receive, send)
            return
        body = await _read_body(receive, MAX_FORM_BYTES) or b""
        form = parse_qs(body.decode("utf-8", "replace"))
        sent = (form.get("csrf") or [""])[0]
        if cookie and secret and not _matches(sent, csrf_token(cookie, secret)):
            await PlainTextResponse("missing or wrong CSRF token", 403)(scope, receive, send)
            return
        parts = _split(cookie) if cookie and secret and cookie.isascii() else None
        claims = _verified(parts[1], secret) if parts and secret else None
        if parts is not None and claims is not None:
            # Server-side, so the cookie is dead wherever a copy of it is; everywhere: every
            # session of the user, in every browser.
            store = await get_store()
            if (form.get("everywhere") or [""])[0] == "1":
                await end_all_sessions(store.pool, claims.scope)
            else:
                await end_session(store.pool, parts[0])
        response = RedirectResponse(LOGIN, 303)
        response.headers["set-cookie"] = _cookie_header("", max_age=0, secure=False)
        await response(scope, receive, send)


def _secret(scope: Scope) -> str | None:
    """The secret that signs this request's session: the server's, else open mode's local one."""
    client = scope.get("client")
    host = Headers(scope=scope).get("host")
    return auth_secret() or local_secret(client[0] if client else None, host)


def _to_login(scope: Scope, path: str, *, clear: bool = False) -> Response:
    query = scope.get("query_string", b"").decode("latin-1")
    target = path + (f"?{query}" if query else "")
    response = RedirectResponse(f"{LOGIN}?next={quote(_safe_next(target), safe='')}", 303)
    if clear:
        response.headers["set-cookie"] = _cookie_header("", max_age=0, secure=False)
    return response


def _static(name: str, method: str) -> Response:
    if method not in SAFE_METHODS or name not in STATIC_FILES:
        return PlainTextResponse("not found", 404)
    data = resources.files("agent.inspector").joinpath("static", name).read_bytes()
    response = Response(data, media_type=STATIC_FILES[name])
    return response


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _with_security_headers(send: Send) -> Send:
    async def wrapped(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            raw = [(k, v) for k, v in message.get("headers", []) if k.decode().lower()
                   not in SECURITY_HEADERS]  # fmt: skip
            raw.extend((k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items())
            message = {**message, "headers": raw}
        await send(message)

    return wrapped


__all__ = ["COOKIE", "CSP", "CSRF_HEADER", "InspectorSession", "csrf_token"]
