"""The server's LangGraph store (`langgraph.json` `store.path`): governed memory, scoped by auth.

`/store/*` requests, Studio's memory view and `runtime.store` inside the graphs all reach the
same `GovernedStore` over this process's `MemoryStore`. The auth handler in `agent/auth.py`
prefixes every client namespace with the caller's (tenant, user); this module adds the second
guard inside the store: the scope of the current request (the server's auth context) or run
(`configurable["langgraph_auth_user"]`) is the only one the store will touch, whatever namespace
arrives. Open local mode (no secret under `langgraph dev`) has no authenticated scope: the
namespace decides, as the run context does for runs in that mode.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from agent.identity import auth_field, is_open_user, scope_of_user
from agent.resources import get_store
from memory.governed_store import GovernedStore
from memory.types import Scope


def _request_user() -> Any:
    try:
        from langgraph_api.utils import get_auth_ctx
    except ImportError:  # outside the LangGraph server
        return None
    ctx = get_auth_ctx()
    return None if ctx is None else ctx.user


def _run_user() -> Any:
    from langgraph.config import get_config

    try:
        configurable = get_config().get("configurable") or {}
    except RuntimeError:  # not inside a run
        return None
    return configurable.get("langgraph_auth_user")


def caller_scope() -> Scope | None:
    """The authenticated scope of the current request or run; None when there is none."""
    for user in (_request_user(), _run_user()):
        if user is None or is_open_user(user):
            continue
        if auth_field(user, "identity"):
            return scope_of_user(user)
    return None


@asynccontextmanager
async def make_store() -> AsyncIterator[GovernedStore]:
    """Entry point named in `langgraph.json` (`store.path`)."""
    yield GovernedStore(await get_store(), caller=caller_scope)
