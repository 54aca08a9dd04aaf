"""Memory API handlers: list, search, get, delete one, export, forget. Always the caller's own.

Every handler starts from `caller_scope(request)`; ids in the path are looked up inside that
scope, so another user's memory id answers 404, exactly like an id that does not exist.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse

from agent.http_auth import caller_scope
from agent.http_memory_actions import json_body, memory_path_id
from agent.limits import admit_memory_search
from agent.resources import get_store
from agent.server_threads import owned_thread_ids, sweep
from memory.storage.deletion_outbox import pending_targets
from memory.storage.export import export_user, memory_to_dict
from memory.storage.forget import ForgetIncompleteError, forget_user
from memory.storage.forget_one import delete_memory as delete_everywhere
from memory.system import recaller
from memory.types import MemoryKind, Status

log = logging.getLogger(__name__)

MAX_LIMIT = 500
MAX_K = 50
MAX_QUERY_CHARS = 2_000


# Memory ids are uuid4 hex; anything else (a NUL byte, a slash, 10 kB of text) names no memory
# and is answered 404 here, before Postgres sees a value it would reject with an error.
def _int(request: Request, name: str, default: int, upper: int) -> int:
    raw = request.query_params.get(name)
    try:
        value = default if raw is None else int(raw)
    except ValueError:
        raise HTTPException(400, f"{name} must be an integer") from None
    if not 0 <= value <= upper:
        raise HTTPException(400, f"{name} must be between 0 and {upper}")
    return value


def _enums(request: Request, name: str, enum: Any, default: list[str]) -> list[Any]:
    raw = request.query_params.get(name)
    values = [v.strip() for v in raw.split(",") if v.strip()] if raw else default
    try:
        return [enum(v) for v in values]
    except ValueError:
        allowed = ", ".join(e.value for e in enum)
        raise HTTPException(400, f"{name} must be one or more of: {allowed}") from None


async def list_memories(request: Request) -> JSONResponse:
    """List the caller's memories, newest first.

    Query parameters status (comma list, default active), kind, limit (max 500) and offset.
    """
    scope = caller_scope(request)
    statuses = _enums(request, "status", Status, ["active"])
    kinds = _enums(request, "kind", MemoryKind, [k.value for k in MemoryKind])
    store = await get_store()
    records = await store.list_memories(
        scope,
        kinds=kinds,
        statuses=[s.value for s in statuses],
        limit=_int(request, "limit", 100, MAX_LIMIT),
        offset=_int(request, "offset", 0, 10**9),
    )
    return JSONResponse({"memories": [memory_to_dict(r) for r in records]})


async def search_memories(request: Request) -> JSONResponse:
    """Ranked recall for the text in q (k results, max 50), each with its score breakdown."""
    scope = caller_scope(request)
    query = (request.query_params.get("q") or "").strip()
    if not query:
        raise HTTPException(400, "q (the search text) is required")
    if "\x00" in query or len(query) > MAX_QUERY_CHARS:
        raise HTTPException(400, f"q must be text of at most {MAX_QUERY_CHARS} characters")
    k = max(1, _int(request, "k", 8, MAX_K))
    await admit_memory_search(scope)  # ranking is CPU work: one bucket with store searches
    store = await get_store()
    # record_access=False: browsing one's memories must not count as the agent using them.
    hits = await recaller(store).recall(scope, query, k=k, record_access=False)
    return JSONResponse(
        {
            "results": [
                {
                    **memory_to_dict(h.record),
                    "score": h.score,
                    "breakdown": h.breakdown.as_dict(),
                    "relevance": rel.as_dict() if (rel := h.breakdown.relevance) else None,
                    "question": h.breakdown.question,
                }
                for h in hits
            ]
        }
    )


async def get_memory(request: Request) -> JSONResponse:
    """One memory of the caller with its audit trail; 404 for any id that is not theirs."""
    scope = caller_scope(request)
    store = await get_store()
    memory_id = await memory_path_id(request, store, scope)
    record = await store.get(scope, memory_id)
    if record is None:
        raise HTTPException(404, "no such memory")
    events = await store.events(scope, memory_id)
    return _json({**memory_to_dict(record), "audit_trail": events})


def _json(data: Any, status_code: int = 200) -> JSONResponse:
    # Audit rows carry datetimes; Starlette's encoder does not know them.
    return JSONResponse(json.loads(json.dumps(data, default=str)), status_code=status_code)


async def delete_memory(request: Request) -> JSONResponse:
    """Delete one memory from Postgres, Chroma, the audit text and thread state; a receipt."""
    scope = caller_scope(request)
    store = await get_store()
    memory_id = await memory_path_id(request, store, scope)
    receipt = await delete_everywhere(store, scope, memory_id, reason="deleted via API")
    if not receipt["memories"]:
        raise HTTPException(404, "no such memory")
    if receipt.get("chroma_pending"):
        # Gone from the system of record and out of recall, but the index still holds it until
        # Chroma answers again: accepted, not done.
        body = {"deleted": memory_id, "receipt": receipt, "pending": ["chroma"]}
        return JSONResponse(body, status_code=202)
    return JSONResponse({"deleted": memory_id, "receipt": receipt})


async def export_memories(request: Request) -> JSONResponse:
    """Everything kept about the caller (memories, versions, profile, audit trail) as JSON."""
    scope = caller_scope(request)
    store = await get_store()
    return _json(await export_user(store, scope))


async def forget_me(request: Request) -> JSONResponse:
    """Delete everything of the caller and their server threads; returns the receipt.

    The JSON body must set confirm to true, so a stray request deletes nothing.
    """
    scope = caller_scope(request)
    body = await json_body(request)  # bounded in size and nesting, like every body
    if body.get("confirm") is not True:
        raise HTTPException(400, 'send {"confirm": true} to delete all of your data')
    store = await get_store()
    threads = await owned_thread_ids(scope)
    try:
        # The database first, so the receipt counts the checkpoints that were there; then the
        # server's registry (owed in the outbox by forget_user), which still holds thread
        # metadata and the last state values.
        receipt = await forget_user(store, scope, extra_threads=threads)
    except ForgetIncompleteError as exc:
        deleted = await sweep()
        body = {"incomplete": True, **exc.receipt.as_dict(), "server_threads_deleted": deleted}
        return JSONResponse(body, status_code=503, headers={"Retry-After": "30"})
    deleted = await sweep()
    done = receipt.as_dict()
    done["pending"] = await pending_targets(store.pool, scope)
    return JSONResponse({**done, "server_threads_deleted": deleted})
