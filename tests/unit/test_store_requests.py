"""The store-search shape check in front of the server's routes (`agent.store_requests`)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from agent.store_requests import MAX_SEARCH_BODY, SEARCH_PATH, StoreSearchShape, search_problem


def test_a_search_without_a_namespace_list_is_refused_clearly() -> None:
    for body in ({}, {"namespace_prefix": None}, {"namespace_prefix": "memories"},
                 {"namespace_prefix": {"a": 1}}, {"query": "x"}):  # fmt: skip
        problem = search_problem(json.dumps(body).encode())
        assert problem is not None and problem[0] == 422 and "namespace_prefix" in problem[1]
    for body in ({"namespace_prefix": []}, {"namespace_prefix": ["memories"], "query": "x"}):
        assert search_problem(json.dumps(body).encode()) is None
    # What the server already answers with its own 422 is left to it.
    for raw in (b"{bad", b"[]", b'"x"', b"\xff\xfe", b"[" * 100_000):
        assert search_problem(raw) is None
    too_large = search_problem(b" " * (MAX_SEARCH_BODY + 1))
    assert too_large is not None and too_large[0] == 413


async def _echo(request: Request) -> JSONResponse:
    return JSONResponse({"body": (await request.body()).decode()})


async def test_a_good_search_reaches_the_route_unchanged_in_any_number_of_chunks() -> None:
    app = Starlette(routes=[Route(SEARCH_PATH, _echo, methods=["POST"]),
                            Route("/other", _echo, methods=["POST"])],
                    middleware=[Middleware(StoreSearchShape)])  # fmt: skip
    body = json.dumps({"namespace_prefix": ["memories"], "query": "bees " * 100}).encode()

    async def chunks() -> AsyncIterator[bytes]:
        for i in range(0, len(body), 7):
            yield body[i : i + 7]

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        resp = await client.post(SEARCH_PATH, content=chunks())
        assert resp.status_code == 200 and resp.json()["body"] == body.decode()
        resp = await client.post(SEARCH_PATH, json={})
        assert resp.status_code == 422
        # Other routes are not read here at all, whatever their body.
        resp = await client.post("/other", content=b"{}")
        assert resp.status_code == 200 and resp.json()["body"] == "{}"
        big = b"[" + b" " * (MAX_SEARCH_BODY * 2) + b"]"
        resp = await client.post(SEARCH_PATH, content=big)
        assert resp.status_code == 413
