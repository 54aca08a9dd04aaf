"""Store searches the LangGraph server would answer with a 500: refused with a clear 422 first.

`POST /store/items/search` (langgraph_api 0.16) reads `namespace_prefix` before validating it:
a body without it, or with null, fails with a bare 500, and with a string it breaks the
connection. The SDK always sends a list, so only hand-written clients meet this; they get the
error they need. Pure ASGI, in front of the server's own routes (`http_app`): the body is read
once, checked, and passed on unchanged.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SEARCH_PATH = "/store/items/search"
# A search body names a namespace, a filter and a query: a few hundred bytes. A larger one is
# refused before it is parsed, so the check costs the event loop little.
MAX_SEARCH_BODY = 256 * 1024
_TOO_LARGE = (413, f"a store search body is at most {MAX_SEARCH_BODY} bytes")


def search_problem(body: bytes) -> tuple[int, str] | None:
    """Why a store search body cannot be served (status, detail), or None to pass it on.

    Malformed JSON and a body that is not an object are left to the server, which answers
    them with a 422 of its own.
    """
    if len(body) > MAX_SEARCH_BODY:
        return _TOO_LARGE
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(payload, dict):
        return None
    prefix = payload.get("namespace_prefix")
    if not isinstance(prefix, list):
        return 422, (
            'namespace_prefix is required: a list of namespace labels, such as ["memories"],'
            " or [] for all of yours"
        )
    return None


class StoreSearchShape:
    """Answers a store search whose body the server cannot serve with 422 (or 413)."""

    def __init__(self, app: ASGIApp) -> None:
        """Wrap `app`."""
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check a store search's body; pass every request on otherwise."""
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != SEARCH_PATH:
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size <= MAX_SEARCH_BODY:
                chunks.append(chunk)
            more = bool(message.get("more_body", False))
        body = b"".join(chunks)
        problem = _TOO_LARGE if size > MAX_SEARCH_BODY else search_problem(body)
        if problem is not None:
            status, detail = problem
            await JSONResponse({"detail": detail}, status_code=status)(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that gives `body` whole once, then whatever the client sends next."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            message: dict[str, Any] = {"type": "http.request", "body": body, "more_body": False}
            return message
        return await receive()

    return replay


__all__ = ["MAX_SEARCH_BODY", "SEARCH_PATH", "StoreSearchShape", "search_problem"]
