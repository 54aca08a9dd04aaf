"""The memory API, served by the LangGraph server itself (`langgraph.json` `http.app`).

All routes live under `/memory` (the server owns `/metrics`, `/ok`, `/docs`) and sit behind the
same custom auth as threads and runs (`http.enable_custom_route_auth`):

| method | path | what |
|---|---|---|
| GET | /memory/memories | the caller's memories (`status`, `kind`, `limit`, `offset`) |
| GET | /memory/memories/search?q= | ranked recall with score breakdowns (`k`) |
| GET | /memory/memories/{id} | one memory and its audit trail |
| DELETE | /memory/memories/{id} | delete one memory; returns a receipt |
| GET | /memory/export | everything kept about the caller, as JSON |
| POST | /memory/forget | `{"confirm": true}`: delete everything of the caller; a receipt |
| GET | /memory/metrics | Prometheus text, the caller's tenant (`memory:metrics`; all: platform) |
| PATCH | /memory/memories/{id} | `{"content": ...}`: edit through the gate, as a new version |
| POST | /memory/memories/{id}/pin, .../unpin | pin or unpin |
| POST | /memory/memories/{id}/approve, .../reject | decide on a pending memory |
| GET | /memory/profile | the profile injected as rules, with its source memories |
| GET | /memory/admin/runs, /memory/admin/runs/{run_id} | consolidation runs and diffs (admin) |
| POST | /memory/admin/runs/{run_id}/rollback | undo a run in the admin's tenant (admin) |
| GET, POST | /memory/admin/backlog, /memory/admin/reindex | unindexed rows; index them (admin) |
| GET | /memory/ui | the memory inspector (pages; see `agent/inspector`) |
| POST | /memory/mcp | the memory as MCP tools, streamable HTTP (see `agent/mcp_http.py`) |

While the database is down every route answers 503 with `Retry-After` and a message saying the
memory store is unavailable; nothing is half-written.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agent import http_memory_actions as actions
from agent import inspector, mcp_http
from agent.auth_tokens import PERMISSION_METRICS, PERMISSION_PLATFORM
from agent.http_auth import caller_scope, has_permission
from agent.http_memories import (
    delete_memory,
    export_memories,
    forget_me,
    get_memory,
    list_memories,
    search_memories,
)
from agent.query_redaction import RedactQueryString
from agent.resources import get_store
from agent.store_requests import StoreSearchShape
from memory.observability.metrics import CONTENT_TYPE, prometheus_text
from memory.storage.availability import is_unavailable, unavailable_from


async def metrics(request: Request) -> Response:
    """Prometheus text of storage, counts, latency, cache and quality metrics.

    Counts and rates are those of the caller's tenant. The metrics permission lets a tenant
    watch its own memory; only the platform permission (the operator) sees every tenant.
    """
    if not has_permission(request, PERMISSION_METRICS):
        raise HTTPException(403, f"needs the {PERMISSION_METRICS!r} permission")
    tenant = None
    if not has_permission(request, PERMISSION_PLATFORM):
        tenant = caller_scope(request).tenant_id
    text = await prometheus_text(await get_store(), tenant=tenant)
    return PlainTextResponse(text, media_type=CONTENT_TYPE)


routes = [
    Route("/memory/memories", list_memories, methods=["GET"]),
    Route("/memory/memories/search", search_memories, methods=["GET"]),
    Route("/memory/memories/{memory_id}", get_memory, methods=["GET"]),
    Route("/memory/memories/{memory_id}", delete_memory, methods=["DELETE"]),
    Route("/memory/export", export_memories, methods=["GET"]),
    Route("/memory/forget", forget_me, methods=["POST"]),
    Route("/memory/metrics", metrics, methods=["GET"]),
    Route("/memory/memories/{memory_id}", actions.edit, methods=["PATCH"]),
    Route("/memory/memories/{memory_id}/pin", actions.pin, methods=["POST"]),
    Route("/memory/memories/{memory_id}/unpin", actions.unpin, methods=["POST"]),
    Route("/memory/memories/{memory_id}/approve", actions.approve, methods=["POST"]),
    Route("/memory/memories/{memory_id}/reject", actions.reject, methods=["POST"]),
    Route("/memory/memories/{memory_id}/restore", actions.restore, methods=["POST"]),
    Route("/memory/memories/{memory_id}/timeline", actions.timeline, methods=["GET"]),
    Route("/memory/profile", actions.profile, methods=["GET"]),
    Route("/memory/admin/runs", actions.runs, methods=["GET"]),
    Route("/memory/admin/runs/{run_id}", actions.run_detail, methods=["GET"]),
    Route("/memory/admin/runs/{run_id}/rollback", actions.run_rollback, methods=["POST"]),
    Route("/memory/admin/backlog", actions.backlog, methods=["GET"]),
    Route("/memory/admin/reindex", actions.reindex, methods=["POST"]),
    *inspector.routes,
    mcp_http.route,
]


class StoreOutageMiddleware:
    """A database outage answers 503 with `Retry-After`, not a bare 500 (pure ASGI)."""

    def __init__(self, app: ASGIApp) -> None:
        """Wrap `app`."""
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on; turn an outage raised before the response started into a 503."""
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as exc:
            if scope["type"] != "http" or started or not is_unavailable(exc):
                raise
            outage = unavailable_from(exc)
            response = JSONResponse(
                {"detail": str(outage)},
                status_code=503,
                headers={"Retry-After": str(outage.retry_after_s)},
            )
            await response(scope, receive, send)


# Middleware here wraps the server's own routes too. A memory route's query string is redacted
# first (`agent.query_redaction`), before any route or the access log reads it. The outage
# middleware is next, so it
# also answers for the inspector's pages; `StoreSearchShape` answers a store search the server
# would fail on with a 422 (`agent.store_requests`). The inspector's session middleware runs
# before the server's auth: it turns the browser's cookie into the bearer header that auth
# verifies (API clients' headers pass untouched).
app = Starlette(
    routes=routes,
    middleware=[
        Middleware(RedactQueryString),
        Middleware(StoreOutageMiddleware),
        Middleware(StoreSearchShape),
        Middleware(inspector.InspectorSession),
    ],
    lifespan=mcp_http.lifespan,
)
