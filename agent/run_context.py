"""Who may set the run context: checked at the server's door, and again inside the graph.

`agent.context.Context` declares per field who sets it. Under token auth a run request (a run on
a thread, a stateless run, a cron's payload; its `context`, or the legacy `config.configurable`
that the server copies into the context) may set only user fields, within their bounds: an
operator or server field, or a name `Context` does not declare, is refused with 403 naming it.
The server lays the request's context over the assistant's stored one only after the auth
handler has run (`Runs.put` in the runtime), so the handler sees what the *request* sets, never
what the admin configured on the assistant.

Inside the graph, as a second wall, every node under token auth reads operator and server fields
from the assistant's stored context or their defaults (the server's environment), never from the
merged run context. Open local mode (`langgraph dev` with no secret) is one developer's own
server: there the context is taken as sent.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import fields, replace
from typing import Any, Literal, ParamSpec, TypeVar, cast, get_args, get_origin, get_type_hints

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.runtime import Runtime

from agent.context import BOUNDS, OPERATOR, SERVER, SET_BY, USER, Context
from agent.identity import verified_user

log = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")

_FIELDS = {f.name: f for f in fields(Context)}
_TYPES = get_type_hints(Context)
_NAMED_AT_MOST = 20  # a refusal names this many fields; a request may send thousands


def set_by(name: str) -> str:
    """Who may set context field `name`: `user`, `operator` or `server` (unknown: operator)."""
    found = _FIELDS.get(name)
    return str(found.metadata.get(SET_BY, OPERATOR)) if found is not None else OPERATOR


USER_FIELDS = tuple(n for n in _FIELDS if set_by(n) == USER)
OPERATOR_FIELDS = tuple(n for n in _FIELDS if set_by(n) == OPERATOR)
SERVER_FIELDS = tuple(n for n in _FIELDS if set_by(n) == SERVER)


class ContextRefused(Exception):
    """A run request set fields only the operator or the server may set (answer: 403)."""

    status_code = 403

    def __init__(self, names: list[str]) -> None:
        shown = ", ".join(_shown(n) for n in names[:_NAMED_AT_MOST])
        if len(names) > _NAMED_AT_MOST:
            shown += f" and {len(names) - _NAMED_AT_MOST} more"
        super().__init__(
            f"a run may not set {shown} in its context: models, prompts, sharing and agent "
            "identity come from the assistant's configuration or server settings, identity "
            f"from your token; a run may set only {', '.join(USER_FIELDS)}"
        )
        self.fields = names


class ContextValueError(ValueError):
    """A user field of a run request has a value of the wrong type or out of bounds (422)."""

    status_code = 422


def _shown(name: str) -> str:
    # A name the client chose: cut short and quoted, so the detail never carries raw input.
    return repr(name[:64])


def check_request_context(values: object) -> None:
    """Refuse what a run request may not set; raise ContextRefused or ContextValueError."""
    if values is None:
        return
    if not isinstance(values, Mapping):
        raise ContextValueError("the run context must be an object of field names to values")
    refused = sorted(str(k) for k in values if set_by(str(k)) != USER)
    if refused:
        raise ContextRefused(refused)
    for name, value in values.items():
        _check_value(str(name), value)


def check_open_context(values: object) -> None:
    """Open local mode's check: any declared field, no unknown name, user fields in bounds.

    A typo such as `modle` used to be dropped and the run went on without the setting; it is
    refused (ContextValueError) naming the fields there are.
    """
    if values is None:
        return
    if not isinstance(values, Mapping):
        raise ContextValueError("the run context must be an object of field names to values")
    unknown = sorted(str(k) for k in values if str(k) not in _FIELDS)
    if unknown:
        shown = ", ".join(_shown(n) for n in unknown[:_NAMED_AT_MOST])
        raise ContextValueError(
            f"unknown run context field {shown}; the fields are {', '.join(sorted(_FIELDS))}"
        )
    for name, value in values.items():
        if set_by(str(name)) == USER:
            _check_value(str(name), value)


def _check_value(name: str, value: object) -> None:
    kind = _TYPES[name]
    if get_origin(kind) is Literal:
        choices = get_args(kind)
        if not isinstance(value, str) or value not in choices:
            raise ContextValueError(f"{name} must be one of {', '.join(choices)}")
        return
    if kind is int:
        fits = isinstance(value, int) and not isinstance(value, bool)
    elif kind is float:
        fits = (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and math.isfinite(float(value))
        )
    else:  # a user field of a type with no check written here: refused until one is
        fits = False
    if not fits:
        raise ContextValueError(f"{name} must be {'an integer' if kind is int else 'a number'}")
    bounds = _FIELDS[name].metadata.get(BOUNDS)
    if bounds is not None and not bounds[0] <= cast(float, value) <= bounds[1]:
        raise ContextValueError(f"{name} must be between {bounds[0]} and {bounds[1]}")


AssistantLookup = Callable[[Any], Awaitable[Mapping[str, Any] | None]]


async def stored_assistant(assistant_id: Any) -> Mapping[str, Any] | None:
    """The server's record of an assistant (graph, stored context), or None if not found."""
    try:
        from langgraph_runtime.database import connect
        from langgraph_runtime.ops import Assistants

        async with connect() as conn:
            found = [a async for a in await Assistants.get(conn, str(assistant_id))]
    except Exception:
        return None
    return cast(Mapping[str, Any], found[0]) if found else None


async def operator_context(
    ctx: Context, config: RunnableConfig | None, lookup: AssistantLookup = stored_assistant
) -> Context:
    """`ctx` with operator and server fields as the operator set them, under token auth.

    Operator fields come from the run's assistant as stored on the server, else their defaults;
    server fields are their defaults (the identity itself comes from `agent.identity`). An
    assistant that cannot be found yields the defaults: the run gets no operator choices.
    """
    if verified_user(config) is None:
        return ctx
    assistant_id = ((config or {}).get("configurable") or {}).get("assistant_id")
    assistant = await lookup(assistant_id) if assistant_id else None
    stored = assistant.get("context") if assistant is not None else None
    configured: Mapping[str, Any] = stored if isinstance(stored, Mapping) else {}
    defaults = Context()
    changes: dict[str, Any] = {}
    for name in (*OPERATOR_FIELDS, *SERVER_FIELDS):
        want = getattr(defaults, name)
        if name in OPERATOR_FIELDS and name in configured:
            want = configured[name]
        if getattr(ctx, name) != want:
            changes[name] = want
    if not changes:
        return ctx
    log.warning("run context overrode %s; the operator's values apply", ", ".join(changes))
    return replace(ctx, **changes)


def governed(node: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Wrap a graph node so its `runtime.context` carries only the operator's operator fields."""

    @functools.wraps(node)
    async def wrapped(*args: P.args, **kwargs: P.kwargs) -> R:
        runtime = kwargs.get("runtime")
        if isinstance(runtime, Runtime) and isinstance(runtime.context, Context):
            ctx = await operator_context(runtime.context, get_config())
            if ctx is not runtime.context:
                cast(dict[str, Any], kwargs)["runtime"] = runtime.override(context=ctx)
        return await node(*args, **kwargs)

    return wrapped
