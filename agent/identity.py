"""Whose memory a run touches: the authenticated identity, else the run's context.

Under LangGraph Platform with custom auth (`langgraph.json` `auth`, see `agent/auth.py`), the
server puts the authenticated user into `configurable["langgraph_auth_user"]`; then any user or
tenant the client sends in the context is ignored, so a client cannot read another user's memory
by naming them (a template that trusts client config leaks one user's memory to another).

One documented exception: with no `MEMORY_AUTH_SECRET` under `langgraph dev`, `agent/auth.py`
authenticates everyone as the *open* local user (marked `memory_auth: "open"`), and the context's
tenant/user decide, as they would with no auth configured at all. Only the server's own
authenticate handler can produce that marker: clients cannot set `langgraph_auth_*` keys.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from agent.auth_tokens import reserved_subject
from agent.context import Context
from memory.sharing.events import reserved_user
from memory.types import Scope, ScopeError

OPEN_AUTH_MARKER = "open"
AUTH_MODE_FIELD = "memory_auth"
DEFAULT_TENANT = "default"
"""Tenant of an authenticated user whose identity names none (never the client's choice)."""


def auth_field(user: Any, name: str) -> Any:
    """A field of an auth user: dict, the server's ProxyUser/DotDict, or an object."""
    if user is None:
        return None
    if isinstance(user, dict):
        return user.get(name)
    try:
        return user[name]
    except (KeyError, TypeError, AttributeError):
        return getattr(user, name, None)


def is_open_user(user: Any) -> bool:
    """True for the open local user of `langgraph dev` without a secret."""
    return bool(auth_field(user, AUTH_MODE_FIELD) == OPEN_AUTH_MARKER)


def scope_of_user(user: Any, identity: Any = None) -> Scope:
    """The scope of an authenticated (not open) user; raises ScopeError if it has none.

    Besides the shared agent memory's ids, the deployment's `created_by` marker
    (`SYSTEM_CREATOR`) is no one's identity: tokens naming it are refused already, and an
    identity carried from before that (a cron's stored creator) must not act under it either.
    """
    identity = identity or auth_field(user, "identity")
    tenant = auth_field(user, "tenant_id")
    scope = _person(Scope(str(tenant or DEFAULT_TENANT), str(identity or "")))
    reserved = reserved_subject(scope.user_id)
    if reserved is not None:
        raise ScopeError(reserved)
    return scope


def _person(scope: Scope) -> Scope:
    if reserved_user(scope.user_id):
        # The tenant's shared agent memory is recalled into every user's prompt and written
        # only by the sharing bus: no identity, token or run context may act as its user.
        raise ScopeError(f"user id {scope.user_id!r} is reserved for the system")
    return scope


def verified_user(config: RunnableConfig | None) -> tuple[Any, str] | None:
    """The server-verified (auth user, identity) of a run under token auth; None otherwise.

    None for open local mode and for graphs run without the server (tests, the CLI).
    """
    configurable = (config or {}).get("configurable") or {}
    user = configurable.get("langgraph_auth_user")
    identity = configurable.get("langgraph_auth_user_id") or auth_field(user, "identity")
    if identity and not is_open_user(user):
        return user, str(identity)
    return None


def resolve_scope(context: Context, config: RunnableConfig | None) -> Scope:
    """The tenant+user scope of this run; raises ScopeError for a user id the system keeps."""
    verified = verified_user(config)
    if verified is not None:
        return scope_of_user(*verified)
    return _person(Scope(context.tenant_id, context.user_id))
