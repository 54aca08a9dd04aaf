"""The memory MCP server over streamable HTTP, at `/memory/mcp` inside the LangGraph server.

The route sits behind the server's custom auth like every `/memory` route
(`http.enable_custom_route_auth`): a request without a valid bearer token is refused with 401
before it reaches the MCP transport. Each tool call takes its user from that authenticated
request (`agent.http_auth.caller_scope`), never from its arguments. The transport is stateless
with JSON responses: every POST carries the token and is authenticated on its own, and no MCP
session outlives the request that created it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.routing import Route

from agent.http_auth import caller_scope
from agent.limits import admit_memory_search, admit_memory_write
from agent.mcp_server import build_server
from agent.mcp_writes import WriteRunner, gate_model_spec
from agent.resources import get_store
from agent.server_threads import owned_thread_ids, sweep
from memory.storage.store import MemoryStore
from memory.types import Scope

PATH = "/memory/mcp"


async def _store() -> MemoryStore:
    return await get_store()


def identify(ctx: Context) -> Scope:
    """The authenticated caller of this tool call's HTTP request."""
    request = ctx.request_context.request
    if not isinstance(request, Request):
        raise ToolError("authentication required")
    try:
        return caller_scope(request)
    except HTTPException as exc:
        raise ToolError(str(exc.detail)) from None


async def _forget_threads(scope: Scope) -> tuple[list[str], Callable[[], Awaitable[int]]]:
    return await owned_thread_ids(scope), sweep


async def _admit_write(scope: Scope) -> None:
    # One bucket with store puts and memory edits: a `remember` flood is a write flood.
    try:
        await admit_memory_write(scope)
    except HTTPException as exc:
        raise ToolError(str(exc.detail)) from None


async def _admit_search(scope: Scope) -> None:
    # One bucket with store and memory searches: each `recall` ranks the user's memories.
    try:
        await admit_memory_search(scope)
    except HTTPException as exc:
        raise ToolError(str(exc.detail)) from None


runner = WriteRunner(_store, gate_model_spec())
server = build_server(
    _store, identify, runner, via="mcp-http", forget_threads=_forget_threads,
    admit_write=_admit_write, admit_search=_admit_search,
)  # fmt: skip
# DNS-rebinding protection guards unauthenticated local servers; this one refuses any request
# without a signed token, and the host names a deployment is reached by are not known here.
server.streamable_http_app(
    streamable_http_path=PATH,
    stateless_http=True,
    json_response=True,
    transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
)
route = Route(
    PATH, endpoint=StreamableHTTPASGIApp(server.session_manager), methods=["GET", "POST", "DELETE"]
)


@asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    """Run the MCP transport's task group, and finish writes a stopped server left."""
    async with server.session_manager.run(), runner.resuming():
        yield


__all__ = ["PATH", "identify", "lifespan", "route"]
