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

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from agent.identity import auth_field, is_open_user, scope_of_user
from agent.resources import get_store
from memory.governed_store import GovernedStore
from memory.settings import Settings, apply_privacy_defaults
from memory.storage.store import open_store
from memory.system import recaller
from memory.types import Scope


def _request_user() -> Any:
    # Only inside the LangGraph server, which has imported its utilities already: importing
    # them elsewhere reads the server's required settings from the environment and fails.
    utils = sys.modules.get("langgraph_api.utils")
    ctx = getattr(utils, "get_auth_ctx", lambda: None)()
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
async def open_governed_store(
    settings: Settings | None = None, **options: Any
) -> AsyncIterator[GovernedStore]:
    """A governed store of its own (library use: any LangGraph agent, compiled with it).

    Opens the memory system (embedded Postgres and Chroma unless URLs are set) and closes it on
    exit. `options` go to `GovernedStore` (policy, privacy, role, conflict_strategy ...); the
    caller check is `caller_scope`, so a run carrying an authenticated user stays in its scope.
    """
    apply_privacy_defaults()
    async with open_store(settings) as memory:
        recaller(memory)  # record each recall's latency in the metrics
        yield GovernedStore(memory, caller=options.pop("caller", caller_scope), **options)


@asynccontextmanager
async def make_store() -> AsyncIterator[GovernedStore]:
    """Entry point named in `langgraph.json` (`store.path`)."""
    yield GovernedStore(await get_store(), caller=caller_scope)
