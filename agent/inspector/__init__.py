"""The memory inspector at `/memory/ui`: see, explain, correct and forget memories in a browser.

Server-rendered pages (no CDN, no fetch of anything outside this server) behind the same token
auth as the API; the browser keeps the token in an HttpOnly cookie (see `session`).
"""

from __future__ import annotations

from starlette.routing import Route

from agent.inspector.pages import (
    account_page,
    admin_page,
    browse_page,
    memory_page,
    profile_page,
    run_page,
    search_page,
)
from agent.inspector.session import InspectorSession

routes = [
    Route("/memory/ui", browse_page, methods=["GET"]),
    Route("/memory/ui/search", search_page, methods=["GET"]),
    Route("/memory/ui/memories/{memory_id}", memory_page, methods=["GET"]),
    Route("/memory/ui/profile", profile_page, methods=["GET"]),
    Route("/memory/ui/account", account_page, methods=["GET"]),
    Route("/memory/ui/admin", admin_page, methods=["GET"]),
    Route("/memory/ui/admin/runs/{run_id}", run_page, methods=["GET"]),
]

__all__ = ["InspectorSession", "routes"]
