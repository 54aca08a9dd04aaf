"""Who is calling a memory API route: the user the server's auth middleware authenticated.

`langgraph.json` sets `http.enable_custom_route_auth`, so the same `agent/auth.py` authenticate
handler runs before these routes and leaves the user in `request.scope["user"]`. The routes take
the scope only from there: no route accepts a tenant or user id from the client.
"""

from __future__ import annotations

import re
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request

from agent.identity import is_open_user, scope_of_user
from memory.types import Scope, ScopeError


def _user(request: Request) -> Any:
    # `request.user` asserts when no auth middleware ran; a missing user must mean "refuse".
    user = request.scope.get("user")
    if user is None or not getattr(user, "is_authenticated", False):
        raise HTTPException(401, "authentication required", headers={"WWW-Authenticate": "Bearer"})
    return user


def caller_scope(request: Request) -> Scope:
    """The authenticated caller's tenant+user; 401 when anonymous, 403 in open local mode."""
    user = _user(request)
    if is_open_user(user):
        raise HTTPException(
            403,
            "the memory API needs an authenticated user: set MEMORY_AUTH_SECRET and send a "
            "bearer token (in open local mode use the `memory-agent` CLI instead)",
        )
    try:
        return scope_of_user(user, getattr(user, "identity", None))
    except ScopeError as exc:
        raise HTTPException(403, f"no usable identity: {exc}") from None


def has_permission(request: Request, permission: str) -> bool:
    """Whether the caller's credentials carry `permission` (open local mode: all of them)."""
    user = _user(request)
    if is_open_user(user):
        return True
    credentials = request.scope.get("auth")
    return permission in (getattr(credentials, "scopes", None) or [])


_PATH_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def path_id(request: Request, name: str = "memory_id") -> str:
    """A path id (memory or run), 404 unless the whole of it has the shape of one.

    A full match: `re.match` with `$` would let an id with a trailing newline through. Anything
    else (NUL bytes, slashes, 300 characters) names nothing the caller owns, so it is simply not
    found; the value is never echoed back.
    """
    value = str(request.path_params.get(name, ""))
    if not _PATH_ID.fullmatch(value):
        raise HTTPException(404, "not found")
    return value
