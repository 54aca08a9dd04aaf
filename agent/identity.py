"""Whose memory a run touches: the authenticated identity, else the run's context.

Under LangGraph Platform with custom auth (`langgraph.json` `auth`), the server puts the
authenticated user into `configurable["langgraph_auth_user"]`; then any user or tenant the
client sends in the context is ignored, so a client cannot read another user's memory by
naming them (DESIGN §7: templates that trust client config leak memory).
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from agent.context import Context
from memory.types import Scope


def _auth_field(user: Any, name: str) -> Any:
    if isinstance(user, dict):
        return user.get(name)
    try:
        return user[name]
    except (KeyError, TypeError):
        return getattr(user, name, None)


def resolve_scope(context: Context, config: RunnableConfig | None) -> Scope:
    """The tenant+user scope of this run."""
    configurable = (config or {}).get("configurable") or {}
    user = configurable.get("langgraph_auth_user")
    identity = configurable.get("langgraph_auth_user_id") or (
        _auth_field(user, "identity") if user is not None else None
    )
    if identity:
        tenant = _auth_field(user, "tenant_id") if user is not None else None
        return Scope(str(tenant or context.tenant_id), str(identity))
    return Scope(context.tenant_id, context.user_id)
