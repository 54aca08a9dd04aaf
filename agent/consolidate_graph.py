"""The `consolidate` graph: one node per consolidation step, looping over batches of users.

begin → expire → decay_cleanup → cluster → distil → merge_duplicates → resolve_conflicts →
finish → begin (next batch) … until no users are left.

Run on a schedule by a LangGraph Platform cron (`python -m agent.schedule`), or locally by
`memory-agent consolidate`. `graph` is compiled without a checkpointer (the server supplies
one). The state carries only what is serialisable (the run id, the cursor, the counts); the
run's open batch (a lock connection, the users' working sets with their vectors) cannot be
checkpointed, so `begin` opens it in an `OpenBatches` registry, the step nodes find it there by
the state's run id and `finish` closes it. The registry is `OPEN_BATCHES` unless the run config
passes its own (`configurable["consolidation_batches"]`, as tests do).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime
from pydantic import Field
from typing_extensions import TypedDict

from agent.auth_tokens import PERMISSION_ADMIN, PERMISSION_PLATFORM
from agent.identity import is_open_user, scope_of_user
from agent.resources import get_store
from memory.longterm.consolidation import (
    STEPS,
    ConsolidationPolicy,
    OpenBatches,
    RunSummary,
    StepContext,
    new_run_id,
    next_scopes,
)
from memory.settings import Settings, apply_privacy_defaults
from memory.types import Scope, ScopeError

apply_privacy_defaults()

OPEN_BATCHES = OpenBatches()
"""The batches of the consolidate runs in progress in this process, by run id."""

# 8 node runs per batch; 100,000 allows 12,500 batches (625,000 users at 50 per batch).
RECURSION_LIMIT = 100_000


def _d(text: str) -> Any:
    return Field(description=text)


class ConsolidateInput(TypedDict, total=False):
    """What a caller (cron, CLI, Studio) sends."""

    tenant_id: Annotated[str, _d("The user's tenant; with all=true, limits the run to it.")]
    user_id: Annotated[str, _d("Consolidate this user (or set all=true).")]
    all: Annotated[bool, _d("Consolidate every user, in batches.")]
    dry_run: Annotated[bool, _d("Plan and report, change nothing.")]
    batch_size: Annotated[int, _d("Users per batch (default: the context's batch_size).")]
    model: Annotated[
        str, _d("'provider:model' to distil with a model; empty: the context's model or rules.")
    ]
    as_of: Annotated[str, _d("ISO time to consolidate as of (backfills, tests); default now.")]


class ConsolidateOutput(TypedDict, total=False):
    """What a run reports: its id and per-step counts (details in `consolidation_runs`)."""

    run_id: Annotated[str, _d("The run's id (for `memory-agent rollback`).")]
    dry_run: Annotated[bool, _d("Whether nothing was changed.")]
    users: Annotated[int, _d("Users consolidated.")]
    counts: Annotated[dict[str, int], _d("Changes per step (expired, forgotten, distilled...).")]
    skipped: Annotated[list[str], _d("Users skipped (locked by another run).")]
    errors: Annotated[list[str], _d("Users whose consolidation failed, with the error.")]
    recovered: Annotated[list[str], _d("Crashed earlier runs rolled back by this one.")]
    decisions: Annotated[list[dict[str, Any]], _d("Every decision the run made, logged.")]


class ConsolidateState(ConsolidateInput, ConsolidateOutput, total=False):
    """Input, output and the batch cursor."""

    cursor: Annotated[list[str] | None, _d("Last (tenant, user) of the previous batch.")]
    done: Annotated[bool, _d("No users are left.")]


@dataclass(kw_only=True)
class ConsolidateContext:
    """Per-assistant defaults of a consolidation run (the input overrides them)."""

    model: str = field(
        default="",
        metadata={
            "description": "'provider:model' to distil with when the input names none; empty "
            "or 'memory-only': rules (no model call)."
        },
    )
    batch_size: int = field(
        default=50, metadata={"description": "Users per batch when the input gives none."}
    )


def _scope(state: ConsolidateState) -> Scope | None:
    if state.get("all"):
        if state.get("user_id"):
            raise ValueError("give either user_id or all=true, not both")
        return None
    if not state.get("user_id"):
        raise ValueError("consolidate needs user_id (with tenant_id) or all=true")
    return Scope(state.get("tenant_id") or Settings.from_env().default_tenant, state["user_id"])


# Consolidating "as of" a later time expires and decays memories early; a little skew is fine.
_MAX_FUTURE_AS_OF = timedelta(minutes=5)


class ConsolidationDenied(ValueError):
    """The authenticated caller may not run this consolidation."""


def authorise(state: ConsolidateState, config: RunnableConfig) -> ConsolidateState:
    """Confine a run to what its authenticated caller may touch; raise when it asks for more.

    Checked inside the graph, whatever assistant or cron started it: the server puts the
    verified caller into `configurable` and clients cannot set those keys. A run with no
    authenticated caller (the CLI, tests, `langgraph dev` in open mode) is the local operator's
    and is left as it is. Otherwise the caller needs `memory:admin`, the run covers only the
    caller's tenant (a different `tenant_id` in the input is refused, not silently replaced)
    unless the token also carries `memory:platform`, and `as_of` may not lie in the future.
    """
    configurable = (config or {}).get("configurable") or {}
    user = configurable.get("langgraph_auth_user")
    if user is None or is_open_user(user):
        return state
    permissions = set(configurable.get("langgraph_auth_permissions") or ())
    if PERMISSION_ADMIN not in permissions:
        raise ConsolidationDenied("consolidation needs the memory:admin permission")
    as_of = state.get("as_of")
    if as_of:
        try:
            when = datetime.fromisoformat(str(as_of))
        except ValueError:
            raise ConsolidationDenied(f"as_of is not an ISO time: {str(as_of)[:40]!r}") from None
        when = when if when.tzinfo else when.replace(tzinfo=UTC)
        if when > datetime.now(UTC) + _MAX_FUTURE_AS_OF:
            raise ConsolidationDenied("as_of may not lie in the future")
    if PERMISSION_PLATFORM in permissions:
        return state
    try:
        tenant = scope_of_user(user).tenant_id
    except ScopeError:
        raise ConsolidationDenied("the caller has no usable identity") from None
    asked = state.get("tenant_id")
    if asked and asked != tenant:
        raise ConsolidationDenied("an admin may consolidate only their own tenant")
    return {**state, "tenant_id": tenant}


def _batches() -> OpenBatches:
    injected: Any = (get_config().get("configurable") or {}).get("consolidation_batches")
    return injected if isinstance(injected, OpenBatches) else OPEN_BATCHES


def _context(state: ConsolidateState, store: Any, ctx: ConsolidateContext) -> StepContext:
    from agent.model import is_memory_only, load_chat_model

    spec = state.get("model") or ctx.model
    # The memory-only responder generates no language: distil by the rules instead.
    model = None if is_memory_only(spec) else load_chat_model(spec)
    return StepContext(store, ConsolidationPolicy(), model)


async def begin(state: ConsolidateState, runtime: Runtime[ConsolidateContext]) -> dict[str, Any]:
    """Pick the next batch of users, lock them, recover interrupted runs, load them."""
    ctx = runtime.context or ConsolidateContext()
    state = authorise(state, get_config())
    scope = _scope(state)
    run_id = state.get("run_id") or new_run_id()
    store = await get_store(get_config())
    tenant = state.get("tenant_id") if scope is None else None
    batch_size = int(state.get("batch_size") or ctx.batch_size)
    scopes = await next_scopes(store, scope=scope, tenant=tenant, cursor=state.get("cursor"),
                               batch_size=batch_size)  # fmt: skip
    dry_run = bool(state.get("dry_run"))
    if not scopes:
        return {"run_id": run_id, "dry_run": dry_run, "done": True}
    as_of = state.get("as_of")
    now = datetime.fromisoformat(as_of) if as_of else datetime.now(UTC)
    await _batches().open(_context(state, store, ctx), run_id, scopes, now=now, dry_run=dry_run)
    return {
        "run_id": run_id,
        "dry_run": dry_run,
        "done": False,
        "cursor": [scopes[-1].tenant_id, scopes[-1].user_id],
    }


def _step_node(step: str) -> Any:
    async def node(state: ConsolidateState) -> dict[str, Any]:
        await _batches().run_step(state["run_id"], step)
        return {}

    node.__name__ = step
    node.__doc__ = f"Run the {step} step for every user of the current batch."
    return node


async def finish(state: ConsolidateState) -> dict[str, Any]:
    """Record the batch's runs, refresh changed profiles, release locks, add up the counts."""
    summary = RunSummary(
        state["run_id"], bool(state.get("dry_run")), int(state.get("users") or 0),
        dict(state.get("counts") or {}), list(state.get("skipped") or []),
        list(state.get("errors") or []), list(state.get("recovered") or []),
        list(state.get("decisions") or []),
    )  # fmt: skip
    summary.absorb(await _batches().close(state["run_id"]))
    result = summary.as_dict()
    del result["run_id"]
    return result


def _after_begin(state: ConsolidateState) -> Literal["expire", "__end__"]:
    return "__end__" if state.get("done") else "expire"


def build_graph() -> (
    StateGraph[ConsolidateState, ConsolidateContext, ConsolidateInput, ConsolidateOutput]
):
    """The uncompiled graph, for callers that compile it with their own checkpointer."""
    builder = StateGraph(
        ConsolidateState,
        context_schema=ConsolidateContext,
        input_schema=ConsolidateInput,
        output_schema=ConsolidateOutput,
    )
    builder.add_node("begin", begin)
    for step in STEPS:
        builder.add_node(step, _step_node(step))
    builder.add_node("finish", finish)
    builder.add_edge(START, "begin")
    builder.add_conditional_edges("begin", _after_begin)
    for before, after in zip(STEPS, [*STEPS[1:], "finish"], strict=True):
        builder.add_edge(before, after)
    builder.add_edge("finish", "begin")
    return builder


graph = build_graph().compile(name="consolidate").with_config(recursion_limit=RECURSION_LIMIT)
