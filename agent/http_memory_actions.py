"""Memory API actions behind the inspector: edit, pin, approve, reject, restore, profile, admin.

User routes act on the caller's own memories only (another user's id answers 404, like an id
that does not exist). Admin routes need the `memory:admin` permission and see the admin's own
tenant only: consolidation runs (with their diff and rollback) and the unindexed backlog. A
run's diff shows other users' memory text only to `memory:platform` (`diff_digest`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse

from agent import limits
from agent.auth_tokens import PERMISSION_ADMIN, PERMISSION_PLATFORM
from agent.http_auth import caller_scope, has_permission, path_id
from agent.resources import get_store
from memory.gating.ingest.edit import EditRefused, edit_memory
from memory.json_limits import JSONDepthError, loads_bounded
from memory.longterm import load_profile, profile_rules
from memory.longterm.consolidation import (
    RollbackConflict,
    UnknownRun,
    list_runs,
    rollback,
    run_diff,
    run_users,
)
from memory.storage.edits import set_pinned, unindexed_backlog
from memory.storage.export import memory_to_dict
from memory.storage.forget_one import delete_memory as delete_everywhere
from memory.storage.index_check import reindex_checked
from memory.storage.store import AmbiguousIdError
from memory.storage.timeline import NotRestorable, window_text
from memory.storage.timeline import restore as restore_value
from memory.storage.timeline import timeline as memory_timeline
from memory.storage.user_locks import RunBusy
from memory.storage.vector import VectorIndexError
from memory.types import MemoryRecord, Scope, Status

MAX_BODY_BYTES = 65_536


async def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object body (empty when none); 400/413 for anything else."""
    raw = await request.body()
    if len(raw) > MAX_BODY_BYTES:
        raise HTTPException(413, f"body larger than {MAX_BODY_BYTES:,} bytes")
    if not raw:
        return {}
    try:
        # Off the event loop: the depth check reads up to MAX_BODY_BYTES of client text.
        body = await asyncio.to_thread(loads_bounded, raw)
    except JSONDepthError as exc:
        raise HTTPException(400, f"body must be JSON: {exc}") from None
    except ValueError:
        raise HTTPException(400, "body must be JSON") from None
    if not isinstance(body, dict):
        raise HTTPException(400, "body must be a JSON object")
    try:
        # JSON may spell a lone surrogate ("\\ud800"): no text of a memory can hold one.
        json.dumps(body, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise HTTPException(400, "body must be valid Unicode text (a lone surrogate)") from None
    return body


def _json(data: Any, status_code: int = 200) -> JSONResponse:
    return JSONResponse(json.loads(json.dumps(data, default=str)), status_code=status_code)


async def memory_path_id(request: Request, store: Any, scope: Scope) -> str:
    """The path's memory id: a full id, or a short one that begins one of the caller's ids."""
    try:
        resolved: str = await store.resolve_id(scope, path_id(request))
    except AmbiguousIdError as exc:
        raise HTTPException(409, str(exc)) from None
    return resolved


async def edit(request: Request) -> JSONResponse:
    """Edit a memory's text (JSON body with a content field) through the gate and conflicts."""
    scope = caller_scope(request)
    path_id(request)  # the shape first: a malformed id is not found before the body is read
    content = (await json_body(request)).get("content")
    if not isinstance(content, str):
        raise HTTPException(400, "content (the new text) is required")
    await limits.admit_memory_write(scope)
    store = await get_store()
    memory_id = await memory_path_id(request, store, scope)
    try:
        result = await edit_memory(store, scope, memory_id, content)
    except EditRefused as exc:
        refused = _json({"detail": str(exc), "related_ids": list(exc.related)}, exc.status)
        if exc.status == 429:  # a full quota: room comes back only when the user deletes
            refused.headers["Retry-After"] = str(limits.QUOTA_RETRY_AFTER_S)
        return refused
    if result is None:
        raise HTTPException(404, "no such memory")
    return _json(
        {
            **memory_to_dict(result.record),
            "action": result.action,
            "reason": result.reason,
            "redacted": list(result.redacted),
            "related_ids": list(result.related_ids),
        }
    )


async def _pin(request: Request, pinned: bool) -> JSONResponse:
    scope = caller_scope(request)
    store = await get_store()
    memory_id = await memory_path_id(request, store, scope)
    reason = "pinned by the user" if pinned else "unpinned by the user"
    record = await set_pinned(store, scope, memory_id, pinned, reason=reason)
    if record is None:
        raise HTTPException(404, "no such memory")
    return _json(memory_to_dict(record))


async def pin(request: Request) -> JSONResponse:
    """Pin a memory: it never decays and chat cannot override it."""
    return await _pin(request, True)


async def unpin(request: Request) -> JSONResponse:
    """Unpin a memory."""
    return await _pin(request, False)


async def own_memory(request: Request) -> tuple[Scope, Any, MemoryRecord]:
    """(scope, store, record) of the path's memory; 404 unless it is the caller's own."""
    scope = caller_scope(request)
    store = await get_store()
    record = await store.get(scope, await memory_path_id(request, store, scope))
    if record is None:
        raise HTTPException(404, "no such memory")
    return scope, store, record


async def _pending(request: Request) -> tuple[Scope, str, Any]:
    scope, store, record = await own_memory(request)
    memory_id = record.id
    if record.status is not Status.PENDING_APPROVAL:
        raise HTTPException(409, f"this memory is {record.status.value}, not pending approval")
    return scope, memory_id, store


async def approve(request: Request) -> JSONResponse:
    """Activate a memory that waited for approval."""
    scope, memory_id, store = await _pending(request)
    record = await store.set_status(
        scope, memory_id, Status.ACTIVE, reason="approved by the user", event="approve"
    )
    if record is None:
        raise HTTPException(404, "no such memory")
    return _json(memory_to_dict(record))


async def reject(request: Request) -> JSONResponse:
    """Drop a memory that waited for approval, everywhere it went; a receipt."""
    scope, memory_id, store = await _pending(request)
    receipt = await delete_everywhere(store, scope, memory_id, reason="rejected by the user")
    return _json({"rejected": memory_id, "receipt": receipt})


async def restore(request: Request) -> JSONResponse:
    """The user says an update was wrong: the replaced value holds again (409 if none was)."""
    scope, store, record = await own_memory(request)
    try:
        restored = await restore_value(store, scope, record.id, actor="inspector")
    except NotRestorable as exc:
        raise HTTPException(409, str(exc)) from None
    return _json(memory_to_dict(restored))


async def timeline(request: Request) -> JSONResponse:
    """The chain of values the memory belongs to, oldest first, with what ended each."""
    scope, store, record = await own_memory(request)
    steps = await memory_timeline(store, scope, record.id)
    return _json(
        [
            {**memory_to_dict(s.record), "window": window_text(s.record), "ended_by": s.ended_by}
            for s in steps
        ]
    )


async def profile(request: Request) -> JSONResponse:
    """The profile the agent injects as rules, and the memory each field came from."""
    scope = caller_scope(request)
    store = await get_store()
    prof = await load_profile(store, scope)
    return _json({**prof.as_dict(), "rules": profile_rules(prof)})


def admin_tenant(request: Request) -> str:
    """The admin's tenant; 403 without the `memory:admin` permission."""
    scope = caller_scope(request)
    if not has_permission(request, PERMISSION_ADMIN):
        raise HTTPException(403, f"needs the {PERMISSION_ADMIN!r} permission")
    return scope.tenant_id


async def runs(request: Request) -> JSONResponse:
    """The tenant's latest consolidation runs."""
    tenant = admin_tenant(request)
    store = await get_store()
    return _json({"runs": await list_runs(store.pool, tenant)})


async def tenant_run(request: Request) -> tuple[str, str, Any, list[dict[str, Any]]]:
    """(tenant, run id, store, the run's user rows in the tenant); 404 when it has none there."""
    tenant = admin_tenant(request)
    run_id = path_id(request, "run_id")
    store = await get_store()
    users = await run_users(store.pool, run_id, tenant)
    if not users:
        raise HTTPException(404, "no such run")
    return tenant, run_id, store, users


def diff_digest(request: Request, store: Any, user_id: str) -> Callable[[str], str] | None:
    """How a run diff of `user_id`'s memories hides their text from this caller, if it must.

    A tenant's admin runs, reviews and rolls back consolidation, but `memory:admin` never
    reads another user's memories: they see each text's length and a keyed digest. The
    memory's owner and `memory:platform` (the deployment's operator) see the text.
    """
    if user_id == caller_scope(request).user_id or has_permission(request, PERMISSION_PLATFORM):
        return None
    digest: Callable[[str], str] = store.index.text_digest
    return digest


async def run_detail(request: Request) -> JSONResponse:
    """One run within the tenant: each user's row and what it changed, as before/after."""
    tenant, run_id, store, users = await tenant_run(request)
    for row in users:
        digest = diff_digest(request, store, row["user_id"])
        scope = Scope(tenant, row["user_id"])
        row["changes"] = await run_diff(store.pool, run_id, scope, digest=digest)
    return _json({"run_id": run_id, "users": users})


async def run_rollback(request: Request) -> JSONResponse:
    """Undo a run for every user of the admin's tenant it touched."""
    tenant, run_id, store, users = await tenant_run(request)
    done: dict[str, Any] = {"run_id": run_id, "users": 0, "restored": 0, "deleted": 0,
                            "already": []}  # fmt: skip
    try:
        for row in users:
            scope = Scope(tenant, row["user_id"])
            report = await rollback(store, run_id, scope=scope, reason="rolled back by an admin")
            done["users"] += report.users
            done["restored"] += report.restored
            done["deleted"] += report.deleted
            done["already"].extend(report.already)
    except UnknownRun:
        raise HTTPException(404, "no such run") from None
    except (RollbackConflict, RunBusy) as exc:
        return _json({**done, "detail": str(exc)}, 409)
    return _json(done)


async def backlog(request: Request) -> JSONResponse:
    """How many of the tenant's memories wait to be indexed in Chroma."""
    tenant = admin_tenant(request)
    store = await get_store()
    return _json(await unindexed_backlog(store, tenant))


async def reindex(request: Request) -> JSONResponse:
    """Index every row not yet in Chroma now, reading back what Chroma holds of the tenant's.

    The counts (`reindex_checked`) are the admin's tenant's; 503 when Chroma does not answer.
    """
    tenant = admin_tenant(request)
    store = await get_store()
    try:
        report = await reindex_checked(store, tenant=tenant)
    except VectorIndexError:
        raise HTTPException(503, "Chroma did not answer; nothing was checked") from None
    return _json(
        {"indexed": report.verified, **report.to_dict(), **await unindexed_backlog(store, tenant)}
    )
