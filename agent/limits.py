"""The server's per-user rate limits and quotas, applied by the auth handlers (token mode).

Every limit is keyed by the identity the token proves (tenant, user), never by anything the
client sends, and lives in Postgres, so all workers of a deployment share it: rates in
`memory.storage.rate_limits` (one row per user and action), quotas counted from the tables
(`memory.storage.quotas`). Over a limit the request is refused with 429, a `Retry-After`
header in whole seconds and a detail naming the limit and its setting, before the server
records anything. Open local mode has one user and no limits.

The memory quota is also checked where memories are written (`memory.gating.ingest.apply`),
so a turn that would pass it drops the memory with an audited reason instead of failing.
"""

from __future__ import annotations

import math
import uuid
from typing import Any

from langgraph_sdk import Auth
from starlette.exceptions import HTTPException as StarletteHTTPException

from agent.identity import is_open_user, scope_of_user
from agent.resources import get_store
from memory.settings import ServiceLimits
from memory.storage.availability import is_unavailable, unavailable_from
from memory.storage.quotas import (
    claim_thread,
    over_quota,
    release_thread,
    thread_claimed,
    usage,
)
from memory.storage.rate_limits import take
from memory.types import Scope, ScopeError

QUOTA_RETRY_AFTER_S = 3600
"""What a full quota answers in `Retry-After`: room comes back only when the user deletes."""

_RATE_SETTINGS = {
    "runs": "MEMORY_RATE_LIMIT_RUNS_PER_MINUTE",
    "threads": "MEMORY_RATE_LIMIT_THREADS_PER_MINUTE",
    "writes": "MEMORY_RATE_LIMIT_WRITES_PER_MINUTE",
    "searches": "MEMORY_RATE_LIMIT_SEARCHES_PER_MINUTE",
}


def too_many(detail: str, retry_after_s: float) -> Auth.exceptions.HTTPException:
    """429 with `Retry-After` rounded up to whole seconds (at least 1), as RFC 9110 wants."""
    seconds = max(1, math.ceil(retry_after_s))
    return Auth.exceptions.HTTPException(
        status_code=429, detail=detail, headers={"Retry-After": str(seconds)}
    )


def _scope(ctx: Auth.types.AuthContext) -> Scope | None:
    if is_open_user(ctx.user):
        return None
    try:
        return scope_of_user(ctx.user, ctx.user.identity)
    except ScopeError:
        raise Auth.exceptions.HTTPException(status_code=403, detail="no usable identity") from None


def _rate(limits: ServiceLimits, action: str) -> int | None:
    return {
        "runs": limits.runs_per_minute,
        "threads": limits.threads_per_minute,
        "writes": limits.writes_per_minute,
        "searches": limits.searches_per_minute,
    }[action]


async def _refusal(scope: Scope, action: str, limits: ServiceLimits) -> tuple[str, float] | None:
    """(detail, seconds to wait) when the user is over the action's rate, else None."""
    per_minute = _rate(limits, action)
    if per_minute is None:
        return None
    store = await get_store()
    wait = await take(store.pool, scope, action, per_minute)
    if wait is None:
        return None
    detail = (
        f"rate limit: at most {per_minute} {action} per minute for each user "
        f"({_RATE_SETTINGS[action]}); try again in {max(1, math.ceil(wait))} s"
    )
    return detail, wait


async def _rate_limit(scope: Scope, action: str, limits: ServiceLimits) -> None:
    refused = await _refusal(scope, action, limits)
    if refused is not None:
        raise too_many(*refused)


def _outage(exc: Exception) -> Auth.exceptions.HTTPException:
    # Limits cannot be checked without Postgres: refuse (deny by default), saying why.
    outage = unavailable_from(exc)
    return Auth.exceptions.HTTPException(
        status_code=503, detail=str(outage), headers={"Retry-After": str(outage.retry_after_s)}
    )


async def admit_run(ctx: Auth.types.AuthContext) -> None:
    """Refuse a run over the caller's run rate (429)."""
    scope = _scope(ctx)
    if scope is None:
        return
    try:
        await _rate_limit(scope, "runs", ServiceLimits.from_env())
    except Exception as exc:
        if is_unavailable(exc):
            raise _outage(exc) from None
        raise


async def admit_thread(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Refuse a thread over the caller's thread rate or quota (429); count it otherwise."""
    scope = _scope(ctx)
    if scope is None:
        return
    thread_id = str(value.get("thread_id") or uuid.uuid4())[:64]
    await _admit_new_thread(scope, thread_id, ServiceLimits.from_env())


async def admit_run_thread(ctx: Auth.types.AuthContext, value: Any) -> None:
    """A run that creates its own thread is a thread creation: the same rate and quota.

    `POST /threads/{id}/runs` with `if_not_exists: "create"` makes the thread when it is
    missing, and a stateless run with `on_completion: "keep"` keeps the thread the server made
    for it; neither passes the threads' create handler, so without this a full thread quota
    (and the thread rate) would be sidestepped one run at a time. A thread the caller already
    holds is no creation. The kept stateless run is refused (403): its thread id is chosen by
    the server after this check, so it could never be counted nor released when deleted.
    """
    scope = _scope(ctx)
    if scope is None:
        return
    limits = ServiceLimits.from_env()
    if limits.threads_per_minute is None and limits.max_threads is None:
        return
    kwargs = value.get("kwargs")
    thread_id = value.get("thread_id")
    if thread_id is None:
        if isinstance(kwargs, dict) and kwargs.get("temporary") is False:
            raise Auth.exceptions.HTTPException(
                status_code=403,
                detail="a stateless run may not keep its thread (on_completion 'keep'): create "
                "a thread (POST /threads, within MEMORY_QUOTA_THREADS) and run on it",
            )
        return
    if value.get("if_not_exists") != "create":
        return  # the server refuses a run on a missing thread: nothing is created
    try:
        store = await get_store()
        if await thread_claimed(store.pool, scope, str(thread_id)[:64]):
            return
    except Exception as exc:
        if is_unavailable(exc):
            raise _outage(exc) from None
        raise
    await _admit_new_thread(scope, str(thread_id)[:64], limits)


async def _admit_new_thread(scope: Scope, thread_id: str, limits: ServiceLimits) -> None:
    if limits.threads_per_minute is None and limits.max_threads is None:
        return
    try:
        await _rate_limit(scope, "threads", limits)
        store = await get_store()
        # Claimed even with no quota, so that a later "create if missing" run can tell this
        # thread from a new one.
        held = await claim_thread(store.pool, scope, thread_id, limits.max_threads)
    except Exception as exc:
        if is_unavailable(exc):
            raise _outage(exc) from None
        raise
    if held is not None:
        raise too_many(
            f"thread quota full: {held:,} of {limits.max_threads:,} threads "
            "(MEMORY_QUOTA_THREADS); delete threads you no longer need",
            QUOTA_RETRY_AFTER_S,
        )


async def thread_deleted(ctx: Auth.types.AuthContext, value: Any) -> None:
    """A deleted thread stops counting against the caller's quota."""
    scope = _scope(ctx)
    thread_id = value.get("thread_id") if isinstance(value, dict) else None
    if scope is None or thread_id is None:
        return
    store = await get_store()
    await release_thread(store.pool, scope, str(thread_id)[:64])


def _value_bytes(value: Any) -> int:
    return len(repr(value).encode("utf-8", "replace"))


async def admit_store_put(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Refuse a store put over the caller's write rate or memory quota (429).

    Deleting (a put of no value) is never limited: a user must always be able to make room.
    """
    scope = _scope(ctx)
    if scope is None or ctx.action != "put" or value.get("value") is None:
        return
    limits = ServiceLimits.from_env()
    try:
        await _rate_limit(scope, "writes", limits)
        if limits.max_memories is None and limits.max_bytes is None:
            return
        store = await get_store()
        held = await usage(store.pool, scope)
    except Exception as exc:
        if is_unavailable(exc):
            raise _outage(exc) from None
        raise
    full = over_quota(held, limits.max_memories, limits.max_bytes, _value_bytes(value["value"]))
    if full is not None:
        raise too_many(
            f"{full} (MEMORY_QUOTA_MEMORIES, MEMORY_QUOTA_BYTES); delete memories to store more",
            QUOTA_RETRY_AFTER_S,
        )


async def admit_store_search(ctx: Auth.types.AuthContext) -> None:
    """Refuse a store search over the caller's search rate (429).

    Each search ranks the user's memories in the server process; the searches of the memory
    API and the MCP `recall` tool share the bucket (`admit_memory_search`).
    """
    scope = _scope(ctx)
    if scope is None or ctx.action != "search":
        return
    try:
        await _rate_limit(scope, "searches", ServiceLimits.from_env())
    except Exception as exc:
        if is_unavailable(exc):
            raise _outage(exc) from None
        raise


async def _admit_route(scope: Scope, action: str) -> None:
    refused = await _refusal(scope, action, ServiceLimits.from_env())
    if refused is not None:
        detail, wait = refused
        retry = str(max(1, math.ceil(wait)))
        raise StarletteHTTPException(429, detail, headers={"Retry-After": retry})


async def admit_memory_write(scope: Scope) -> None:
    """Refuse a memory write over the caller's write rate, which store puts share (429).

    For `PATCH /memory/memories/{id}` (a route of the memory API: Starlette's exception) and
    the MCP `remember` tool.
    """
    await _admit_route(scope, "writes")


async def admit_memory_search(scope: Scope) -> None:
    """Refuse a memory search over the caller's search rate, which store searches share (429).

    For `GET /memory/memories/search`, the inspector's search and the MCP `recall` tool.
    """
    await _admit_route(scope, "searches")


__all__ = [
    "QUOTA_RETRY_AFTER_S",
    "admit_memory_search",
    "admit_memory_write",
    "admit_run",
    "admit_run_thread",
    "admit_store_put",
    "admit_store_search",
    "admit_thread",
    "too_many",
]
