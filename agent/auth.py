"""Custom auth for the LangGraph server (`langgraph.json` `auth`): who is calling, what they own.

Two modes, chosen by one environment variable:

- **Token mode** (`MEMORY_AUTH_SECRET` set): every request needs `Authorization: Bearer <token>`
  (see `agent.auth_tokens`; mint one with `python -m agent.auth_tokens --user U --tenant T`).
  The identity is the token's user, `tenant_id` its tenant. Threads, runs and crons are stamped
  with `owner` + `tenant_id` metadata on create and every read, search, update or delete is
  filtered by them, so a thread is visible only to the user who created it. The memory scope of a
  run comes from this identity (`agent.identity.resolve_scope`), never from the client's context,
  and a run's context may set only the fields a user may choose (`agent.run_context`): models,
  prompts, sharing rules and agent identity are the operator's, on the assistant.
- **Open local mode** (no secret, only under `langgraph dev` or with `MEMORY_AUTH_OPEN=1`, and
  only for loopback clients naming the server by a loopback host, `agent.local_mode`):
  every caller is the open local user; runs use the context's `tenant_id`/`user_id` as they would
  with no auth configured, and the memory HTTP API is refused (it has nobody to scope to) except
  to the inspector's chosen local user. Any
  other server without a secret refuses every request: a deployment that forgot the secret
  fails closed instead of serving everyone's memory.
"""

from __future__ import annotations

import asyncio
import os
import re
from typing import Any
from uuid import UUID, uuid5

from langgraph_sdk import Auth
from starlette.requests import Request

from agent import limits
from agent.auth_tokens import (
    PERMISSION_ADMIN,
    PERMISSION_METRICS,
    PERMISSION_PLATFORM,
    SYSTEM_CREATOR,
    TokenError,
    auth_secret,
    verify_token,
)
from agent.identity import (
    AUTH_MODE_FIELD,
    OPEN_AUTH_MARKER,
    auth_field,
    is_open_user,
    scope_of_user,
)
from agent.input_guard import InputTooLargeError, guard_run_input
from agent.local_mode import LOCAL_SECRET, LOCAL_USER_LABEL, is_local_request, open_mode_allowed
from agent.resources import get_store
from agent.run_context import (
    ContextRefused,
    ContextValueError,
    check_open_context,
    check_request_context,
    stored_assistant,
)
from agent.server_threads import sweep
from memory.storage.checkpoint_runs import run_on_another_thread
from memory.types import ScopeError

OPEN_IDENTITY = "local-dev"
RUN_POLICY_ENV = "MEMORY_RUN_POLICY"
_GRAPH_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_NEED = re.compile(r"user|[a-z][a-z0-9_.-]{0,31}:[a-z][a-z0-9_.-]{0,31}")


def run_policy(extra: str | None = None) -> dict[str, str]:
    """The built-in policy plus the operator's `MEMORY_RUN_POLICY` ("graph=user,g2=memory:admin").

    A fork that adds a graph to `langgraph.json` says here who may run it; a graph named nowhere
    stays unreachable. A malformed entry stops the server at start, with what is wrong.
    """
    policy = {"agent": "user", "consolidate": PERMISSION_ADMIN}
    raw = os.environ.get(RUN_POLICY_ENV, "") if extra is None else extra
    for entry in filter(None, (e.strip() for e in raw.split(","))):
        graph, _, need = (part.strip() for part in entry.partition("="))
        if not _GRAPH_NAME.fullmatch(graph) or not _NEED.fullmatch(need):
            raise ValueError(
                f"{RUN_POLICY_ENV}: {entry[:80]!r} is not graph=user or graph=<permission> "
                "(e.g. reports=memory:admin)"
            )
        policy[graph] = need
    return policy


RUN_POLICY: dict[str, str] = run_policy()
"""Who may start a run of each graph: any signed-in user, or holders of a permission.

Deny by default: a run whose assistant resolves to a graph not listed here is refused, and so is
creating an assistant of such a graph. The graph is looked up server-side from the assistant id,
so an admin-created assistant of `consolidate` under any id or name stays admin-only.
"""
ADMIN_GRAPHS = tuple(g for g, need in RUN_POLICY.items() if need == PERMISSION_ADMIN)
# The server names a graph's default assistant uuid5(NAMESPACE_GRAPH, graph_id) (langgraph_api).
_NAMESPACE_GRAPH = UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8")
_DEFAULT_ASSISTANTS = {
    **{g: g for g in RUN_POLICY},
    **{str(uuid5(_NAMESPACE_GRAPH, g)): g for g in RUN_POLICY},
}

auth = Auth()


def _unauthorized(detail: str) -> Auth.exceptions.HTTPException:
    return Auth.exceptions.HTTPException(
        status_code=401, detail=detail, headers={"WWW-Authenticate": "Bearer"}
    )


def _local_user(authorization: str | None) -> dict[str, Any] | None:
    """The inspector's chosen local user (a token of this process's local secret), else None."""
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    try:
        claims = verify_token(token.strip(), LOCAL_SECRET)
    except TokenError:
        return None
    return {
        "identity": claims.scope.user_id,
        "tenant_id": claims.scope.tenant_id,
        "display_name": f"{claims.scope.user_id} ({LOCAL_USER_LABEL})",
        "is_authenticated": True,
        "permissions": [PERMISSION_METRICS],
    }


@auth.authenticate
async def authenticate(
    authorization: str | None, request: Request | None = None
) -> Auth.types.MinimalUserDict:
    """Verify the bearer token (token mode) or return the open local user (open mode)."""
    secret = auth_secret()
    if secret is None:
        if not open_mode_allowed():
            raise _unauthorized("MEMORY_AUTH_SECRET is not set: this server refuses requests")
        client = request.client.host if request is not None and request.client else None
        host = request.headers.get("host") if request is not None else None
        origin = request.headers.get("origin") if request is not None else None
        if not is_local_request(client, host, origin):
            raise _unauthorized(
                "open local mode serves this machine only (loopback, by a loopback name, from"
                " a page of this machine or MEMORY_OPEN_ORIGINS): set MEMORY_AUTH_SECRET to"
                " serve others"
            )
        local = _local_user(authorization)
        if local is not None:
            return local  # type: ignore[return-value]
        user: dict[str, Any] = {
            "identity": OPEN_IDENTITY,
            "display_name": "local developer (open mode)",
            "is_authenticated": True,
            "permissions": [PERMISSION_METRICS],
            AUTH_MODE_FIELD: OPEN_AUTH_MARKER,
        }
        return user  # type: ignore[return-value]
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise _unauthorized("missing bearer token")
    try:
        claims = verify_token(token, secret)
    except TokenError as exc:
        raise _unauthorized(str(exc)) from None
    verified: dict[str, Any] = {
        "identity": claims.scope.user_id,
        "tenant_id": claims.scope.tenant_id,
        "display_name": claims.scope.user_id,
        "is_authenticated": True,
        "permissions": list(claims.permissions),
    }
    return verified  # type: ignore[return-value]


def _owner(ctx: Auth.types.AuthContext) -> dict[str, str] | None:
    """The owner stamp of the caller; None in open mode; 403 for users with no scope."""
    if is_open_user(ctx.user):
        return None
    try:
        scope = scope_of_user(ctx.user, ctx.user.identity)
    except ScopeError:
        raise Auth.exceptions.HTTPException(status_code=403, detail="no usable identity") from None
    return {"owner": scope.user_id, "tenant_id": scope.tenant_id}


def _stamp_owner(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> Any:
    owner = _owner(ctx)
    if owner is None:
        return None
    metadata = value.get("metadata")
    if metadata is None:
        metadata = value["metadata"] = {}
    # In place: the server keeps a reference to this dict. Overwrite, never merge under: a client
    # must not create or move a thread into someone else's name by sending `owner` metadata.
    metadata.update(owner)
    return owner


@auth.on.threads.create
async def on_thread_create(ctx: Auth.types.AuthContext, value: Any) -> Any:
    """Stamp the caller as the owner of a new thread (within their rate and quota)."""
    await limits.admit_thread(ctx, value)
    return _stamp_owner(ctx, value)


async def graph_of_assistant(assistant_id: Any) -> str | None:
    """The graph an assistant id resolves to on this server, or None when it cannot be found.

    Read from the server's own assistant registry (the same one the run will use), never from
    the request: the client names an assistant, the server says which graph that is.
    """
    key = str(assistant_id)
    if key in _DEFAULT_ASSISTANTS:
        return _DEFAULT_ASSISTANTS[key]
    # Under the caller's auth context, whose assistant read handler allows reads; a missing or
    # unreadable assistant yields nothing.
    found = await stored_assistant(key)
    return str(found["graph_id"]) if found else None


def may_run_graph(ctx: Auth.types.AuthContext, graph_id: str | None) -> bool:
    """True when the caller may start a run of `graph_id` (unknown graphs: nobody)."""
    need = RUN_POLICY.get(graph_id or "")
    if need is None:
        return False
    return need == "user" or _owner(ctx) is None or need in ctx.permissions


# Keys the server itself writes into a run's or cron's `configurable` (which it copies into the
# context when the request sent none); it overwrites them, and they are no `Context` field.
_SERVER_CONFIG_KEYS = frozenset(
    {"cron_id", "langgraph_auth_user", "langgraph_auth_user_id", "langgraph_auth_permissions"}
)


def refuse_operator_context(
    ctx: Auth.types.AuthContext, graph_id: str | None, *sent: Any, open_check: bool = False
) -> None:
    """Under token auth, a run request may set only the user fields of the run context.

    With `open_check`, open local mode checks too: any declared field may be set there, but an
    unknown name (a typo) or a user field out of bounds is refused instead of ignored.

    `sent` are the request's own context dicts (its `context`, its `config.configurable`), never
    the assistant's, which the server merges in later. Admin graphs are exempt: only admins run
    them, and they check the caller themselves.
    """
    if graph_id in ADMIN_GRAPHS or (_owner(ctx) is None and not open_check):
        return
    check = check_open_context if _owner(ctx) is None else check_request_context
    for values in sent:
        if isinstance(values, dict):
            values = {k: v for k, v in values.items() if k not in _SERVER_CONFIG_KEYS}
        try:
            check(values)
        except (ContextRefused, ContextValueError) as exc:
            raise Auth.exceptions.HTTPException(
                status_code=exc.status_code, detail=str(exc)
            ) from None


# What the agent graph's input schema (`agent.state.InputState`) declares.
_AGENT_INPUT_KEYS = frozenset({"messages"})


def refuse_unknown_input(value: Any) -> None:
    """A run input of the agent with a key it does not take (`message` for `messages`): 422.

    The graph would drop the key and answer "input is empty", which hides the typo. An input
    that is not an object at all (a bare string) would fail the run instead: also 422.
    """
    if value is None:  # a run that only resumes (`command`) or continues the thread
        return
    if not isinstance(value, dict):
        raise Auth.exceptions.HTTPException(
            status_code=422,
            detail='the agent\'s input is an object: {"messages": [{"role": "user", '
            '"content": "..."}]}',
        )
    unknown = sorted(str(k)[:64] for k in value if k not in _AGENT_INPUT_KEYS)
    if unknown:
        raise Auth.exceptions.HTTPException(
            status_code=422,
            detail=f"the agent's input takes only 'messages' (a list of {{role, content}}); "
            f"unknown input key {', '.join(repr(k) for k in unknown[:5])}",
        )


def _configurable(payload: Any) -> Any:
    config = payload.get("config") if isinstance(payload, dict) else None
    return config.get("configurable") if isinstance(config, dict) else None


@auth.on.threads.create_run
async def on_run_create(ctx: Auth.types.AuthContext, value: Any) -> Any:
    """A run only on the caller's own thread, of a graph the caller may run (deny by default)."""
    await sweep()
    graph_id = await graph_of_assistant(value.get("assistant_id"))
    if not may_run_graph(ctx, graph_id):
        return False
    kwargs = value.get("kwargs")
    # `kwargs["context"]` is exactly what the request sent, as `context` or as the legacy
    # `config.configurable` (the server copies either into it); the assistant's is not merged yet.
    refuse_operator_context(
        ctx, graph_id, kwargs.get("context") if isinstance(kwargs, dict) else None, open_check=True
    )
    if graph_id == "agent" and isinstance(kwargs, dict):
        refuse_unknown_input(kwargs.get("input"))
    if isinstance(kwargs, dict) and _owner(ctx) is not None:
        refuse_state_command(kwargs.get("command"))
    # After the context check, so a refused request spends none of the caller's rate. A run
    # that creates its thread counts as a thread first (the threads' handler never sees it).
    await limits.admit_run_thread(ctx, value)
    await limits.admit_run(ctx)
    owner = _stamp_owner(ctx, value)
    if isinstance(kwargs, dict):
        # Before the server records the run: its registry, the thread's values and the first
        # checkpoint write then only ever hold the redacted, size-checked text.
        try:  # in a worker thread: redaction is CPU work on text of any size up to the limit
            await asyncio.to_thread(guard_run_input, kwargs)
        except InputTooLargeError as exc:
            raise Auth.exceptions.HTTPException(status_code=413, detail=str(exc)) from None
    return owner


def refuse_state_command(command: Any) -> None:
    """Under token auth a run's `command` may only resume an interrupted turn (403 otherwise).

    `update` writes any channel of the graph and `goto` picks the next node: with them a
    client could set the composed prompt (a system message of its own, past the refusal of
    client system messages), forge the approvals awaiting an answer, or skip `perceive` and
    its brakes. The graph's channels are its nodes' to write; the client's words enter as
    `input.messages`, its answers to an interrupt as `command.resume`.
    """
    if command is None:
        return
    if not isinstance(command, dict) or any(
        value is not None for key, value in command.items() if key != "resume"
    ):
        raise Auth.exceptions.HTTPException(
            status_code=403,
            detail="refused: a run's command may only resume an interrupted turn"
            ' ({"resume": ...}); update and goto are the graph\'s own',
        )


@auth.on.threads.update
async def on_thread_update(ctx: Auth.types.AuthContext, value: Any) -> Any:
    """Update only the caller's threads, and never change their owner.

    Under token auth a client may not write a thread's state (`POST /threads/{id}/state`, the
    one update that carries no metadata): as with a run's `command.update`, it would set the
    graph's own channels (see `refuse_state_command`).
    """
    if "metadata" not in value and _owner(ctx) is not None:
        raise Auth.exceptions.HTTPException(
            status_code=403,
            detail="refused: a thread's state is written by its runs; send your turn as a run's"
            " input.messages",
        )
    return _stamp_owner(ctx, value)


@auth.on.threads
async def on_threads(ctx: Auth.types.AuthContext, value: Any) -> Any:
    """Read, search, delete: only the caller's threads (forgotten ones deleted first).

    Deleting a run (`run_id` set) deletes its checkpoints by the run's id alone, so a run on
    another thread is refused as not found; the thread itself stays, and counts on.
    """
    await sweep()
    owner = _owner(ctx)
    if ctx.action == "delete":
        run_id = value.get("run_id") if isinstance(value, dict) else None
        if run_id is None:
            await limits.thread_deleted(ctx, value)
        elif await run_on_another_thread(
            (await get_store()).pool, str(run_id), str(value.get("thread_id"))
        ):
            raise Auth.exceptions.HTTPException(status_code=404, detail="Not Found")
    return owner


def _carry_creator(ctx: Auth.types.AuthContext, config: dict[str, Any], context: Any) -> None:
    """Fold a cron's `context` into its `config.configurable` (in place) with the caller's identity.

    The server starts a cron's runs with no request and so no token: the caller's identity and
    permissions travel in `config.configurable`, which its scheduler reads back for each run.
    That scheduler (langgraph_api 0.16) then refuses a run with both a `context` and a non-empty
    `configurable` ("Cannot specify both configurable and context"): it removes only `cron_id`
    and `langgraph_auth_user` first, never `langgraph_auth_permissions`, so a cron with a
    context would never fire. Folded into `configurable` (the legacy spelling, which the server
    copies into the run's context itself), the context reaches the run all the same.
    """
    configurable = config.get("configurable")
    if not isinstance(configurable, dict):
        configurable = config["configurable"] = {}
    if isinstance(context, dict):
        # Context wins over the legacy spelling; never over what the server or we write.
        configurable.update({k: v for k, v in context.items() if k not in _SERVER_CONFIG_KEYS})
    configurable["langgraph_auth_permissions"] = list(ctx.permissions)
    fields = ("identity", "tenant_id", "display_name", "is_authenticated", AUTH_MODE_FIELD)
    configurable["langgraph_auth_user"] = {
        k: auth_field(ctx.user, k) for k in fields if auth_field(ctx.user, k) is not None
    }


@auth.on.crons.create
async def on_cron_create(ctx: Auth.types.AuthContext, value: Any) -> Any:
    """Crons run later without a request (so without a token): admins only, stamped."""
    if _owner(ctx) is not None and PERMISSION_ADMIN not in ctx.permissions:
        return False
    payload = value.get("payload")
    assistant = payload.get("assistant_id") if isinstance(payload, dict) else None
    graph_id = await graph_of_assistant(assistant)
    if not may_run_graph(ctx, graph_id):
        return False
    if isinstance(payload, dict):
        refuse_operator_context(ctx, graph_id, payload.get("context"), _configurable(payload))
        # In place: the server stores this payload, with the `cron_id` it wrote already.
        config = payload.get("config")
        if not isinstance(config, dict):
            config = payload["config"] = {}
        _carry_creator(ctx, config, payload.pop("context", None))
    return _stamp_owner(ctx, value)


async def _stored_cron_payload(cron_id: Any) -> dict[str, Any]:
    """The stored payload of a cron the caller may read ({} when there is none)."""
    try:
        from langgraph_runtime.database import connect
        from langgraph_runtime.ops import Crons

        async with connect() as conn:
            found = [c async for c in await Crons.get(conn, cron_id)]
    except Exception:
        return {}
    payload = found[0].get("payload") if found else None
    return payload if isinstance(payload, dict) else {}


@auth.on.crons
async def on_crons(ctx: Auth.types.AuthContext, value: Any) -> Any:
    """Read, search, update, delete: only the caller's crons; an update's payload as a create's."""
    payload = value.get("payload") if ctx.action == "update" else None
    if isinstance(payload, dict):
        # The server shallow-merges an update's payload into the stored one and keeps the
        # stored assistant, so the stored cron says which graph the context is checked for.
        stored = await _stored_cron_payload(value.get("cron_id"))
        assistant = stored.get("assistant_id") or payload.get("assistant_id")
        graph_id = await graph_of_assistant(assistant) if assistant else None
        refuse_operator_context(ctx, graph_id, payload.get("context"), _configurable(payload))
        if "context" in payload or "config" in payload:
            # A new `config` would replace the stored one and drop the identity it carries, a
            # new `context` would stop the cron firing (see `_carry_creator`): the merged result
            # is written as a create's, stamped with the caller (the owner: the filter below).
            # A new context is merged over the folded old one: once folded, the two spellings
            # can no longer be told apart, so replacing would drop legacy `configurable` keys.
            base = payload.get("config", stored.get("config"))
            # Copies: the stored cron must not change before the server accepts the update.
            config = dict(base) if isinstance(base, dict) else {}
            configurable = config.get("configurable")
            config["configurable"] = dict(configurable) if isinstance(configurable, dict) else {}
            _carry_creator(ctx, config, payload.get("context", stored.get("context")))
            payload["config"] = config
            payload["context"] = {}  # overrides a stored context (folded above); empty is "none"
    return _owner(ctx)


def assistant_creator(owner: dict[str, str]) -> str:
    """The `created_by` stamp of an assistant a tenant's admin makes: `user:<tenant>/<user>`.

    Never the bare user id: the runtime marks its own assistants `created_by: system`, which
    every tenant reads and runs, and a user id (an operator's service account called "system")
    must not be able to spell that. `/` is in no scope id, so no stamp equals the marker.
    """
    return f"user:{owner['tenant_id']}/{owner['owner']}"


@auth.on.assistants
async def assistants(ctx: Auth.types.AuthContext, value: Any) -> Any:
    """Everyone uses the deployment's own assistants; a tenant's admins make and change theirs.

    The assistants the server creates from `langgraph.json` (`created_by: system`) serve every
    tenant, so only `memory:platform` changes them: their operator fields (system prompt,
    approval, sharing) would otherwise be one tenant admin's to set for all. An assistant an
    admin makes is stamped with their tenant (`assistant_creator`), and only that tenant sees,
    runs and changes it. An assistant can only be made for a graph in `RUN_POLICY`: a graph
    added to `langgraph.json` stays unreachable until its run policy is written down.
    """
    if ctx.action == "create" and value.get("graph_id") not in RUN_POLICY:
        return False
    owner = _owner(ctx)
    if owner is None:
        return None
    tenant = {"tenant_id": owner["tenant_id"]}
    platform = PERMISSION_PLATFORM in ctx.permissions
    if ctx.action in ("read", "search"):
        return None if platform else {"$or": [{"created_by": SYSTEM_CREATOR}, tenant]}
    if PERMISSION_ADMIN not in ctx.permissions:
        return False
    metadata = value.get("metadata")
    if ctx.action == "create" and metadata is None:
        metadata = value["metadata"] = {}
    if isinstance(metadata, dict):
        # In place (the server keeps this dict, and merges an update's into the stored one).
        if platform and ctx.action == "update":
            # The platform changes any assistant, the server's own included: its stamp stays
            # as stored (restamping would hand the server's assistant to one tenant).
            metadata.pop("tenant_id", None)
            metadata.pop("created_by", None)
        else:
            # No tenant of the client's choosing, and no claim to be the server's own
            # assistant, which every tenant could then read and run.
            metadata.update(tenant, created_by=assistant_creator(owner))
    return None if platform else tenant


@auth.on.store
async def store_namespace(ctx: Auth.types.AuthContext, value: Any) -> Any:
    """LangGraph's store (governed memory): confine every operation to the caller's namespace.

    A client names only the part below its own (tenant, user): `("memories",)` or a kind such
    as `("preference",)`, or nothing to list. The prefix comes from the token, for admins too:
    `memory:admin` covers graphs and crons, never another user's memory.
    """
    owner = _owner(ctx)
    if owner is None:
        return None
    relative = tuple(value.get("namespace") or ())
    if len(relative) > 1:
        raise Auth.exceptions.HTTPException(
            status_code=403,
            detail="store namespaces are relative to your own memory: send ('memories',) or"
            " a memory kind, never a tenant or user",
        )
    value["namespace"] = (owner["tenant_id"], owner["owner"], *relative)
    await limits.admit_store_put(ctx, value)
    await limits.admit_store_search(ctx)
    return None


@auth.on
async def deny_everything_else(ctx: Auth.types.AuthContext, value: Any) -> Any:
    """Any resource or action not handled above is refused in token mode."""
    return _owner(ctx) is None
