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
| GET | /memory/metrics | Prometheus text (needs the `memory:metrics` permission) |
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from agent.auth_tokens import PERMISSION_METRICS
from agent.http_auth import has_permission
from agent.http_memories import (
    delete_memory,
    export_memories,
    forget_me,
    get_memory,
    list_memories,
    search_memories,
)
from agent.resources import get_store
from memory.observability.metrics import prometheus_text

PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"


async def metrics(request: Request) -> Response:
    """Prometheus text of storage, counts, latency, cache and quality metrics."""
    if not has_permission(request, PERMISSION_METRICS):
        raise HTTPException(403, f"needs the {PERMISSION_METRICS!r} permission")
    text = await prometheus_text(await get_store())
    return PlainTextResponse(text, media_type=PROMETHEUS_TEXT)


routes = [
    Route("/memory/memories", list_memories, methods=["GET"]),
    Route("/memory/memories/search", search_memories, methods=["GET"]),
    Route("/memory/memories/{memory_id}", get_memory, methods=["GET"]),
    Route("/memory/memories/{memory_id}", delete_memory, methods=["DELETE"]),
    Route("/memory/export", export_memories, methods=["GET"]),
    Route("/memory/forget", forget_me, methods=["POST"]),
    Route("/memory/metrics", metrics, methods=["GET"]),
]

app = Starlette(routes=routes)
