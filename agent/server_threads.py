"""The LangGraph server's own thread registry: deleting a forgotten user's threads from it.

The server keeps each thread's metadata, last values and runs in its own store (in memory and a
local file under `langgraph dev`, its database on LangGraph Platform), apart from the
checkpoints. Only code running inside the server can change it, through the in-process
`langgraph_sdk` client. A deletion made elsewhere (`memory-agent forget` in another process)
leaves its server work in the deletion outbox; `sweep` does that work and is called by the auth
handlers before any thread or run request is served, so a forgotten thread is never answered
again, and by `POST /memory/forget` right after its own deletion.
"""

from __future__ import annotations

import contextvars
import logging
from typing import Any

from agent.resources import get_store
from memory.storage.availability import is_unavailable
from memory.storage.deletion_outbox import clear, owner_digest, server_work
from memory.types import Scope, ScopeError

log = logging.getLogger(__name__)

# The in-process client's requests may pass through the auth handlers again: no nested sweep.
_SWEEPING: contextvars.ContextVar[bool] = contextvars.ContextVar("lma_sweeping", default=False)


def _loopback() -> Any:
    from langgraph_sdk import get_client

    # The in-process client bypasses auth, so the owner filters below are the whole guard.
    return get_client()


async def owned_thread_ids(scope: Scope) -> list[str]:
    """Thread ids the server's registry holds with this owner's stamp."""
    client = _loopback()
    owner = {"owner": scope.user_id, "tenant_id": scope.tenant_id}
    ids: list[str] = []
    while True:
        page = await client.threads.search(metadata=owner, limit=100, offset=len(ids))
        ids.extend(str(t["thread_id"]) for t in page)
        if len(page) < 100:
            return ids


async def _delete(client: Any, row: dict[str, Any]) -> bool:
    from langgraph_sdk.errors import NotFoundError

    thread_id = str(row["item"])
    try:
        thread = await client.threads.get(thread_id)
        if not _still_theirs(thread, str(row["owner_user"])):
            # Deleted by its owner since, and created again by someone else with the same id.
            log.warning("server thread %s belongs to another user now; kept", thread_id)
            return False
        await client.threads.delete(thread_id)
    except NotFoundError:
        return False  # already gone (deleted earlier, or never on this server)
    return True


def _still_theirs(thread: Any, owner_digest_: str) -> bool:
    """Whether the thread carries the forgotten owner's stamp (or none: made without auth)."""
    metadata = (thread or {}).get("metadata") or {}
    owner, tenant = metadata.get("owner"), metadata.get("tenant_id")
    if owner is None:
        return True
    try:
        return owner_digest(Scope(str(tenant or ""), str(owner))) == owner_digest_
    except ScopeError:
        return False


async def sweep() -> int:
    """Delete the server threads the outbox owes; how many threads were deleted."""
    if _SWEEPING.get():
        return 0
    try:
        store = await get_store()
        work = await server_work(store.pool)
    except Exception as exc:
        if not is_unavailable(exc):
            raise
        # The database is down: the checkpoints (all a thread's content) cannot be read now
        # either, and the owed deletions wait in the outbox for the next request.
        log.warning("database unavailable; server thread deletions wait: %s", exc)
        return 0
    if not work:
        return 0
    token = _SWEEPING.set(True)
    try:
        client = _loopback()
        deleted = 0
        for row in work:
            deleted += await _delete(client, row)
            await clear(store.pool, [row["id"]])
    finally:
        _SWEEPING.reset(token)
    if deleted:
        log.info("deleted %d server threads of forgotten users", deleted)
    return deleted


__all__ = ["owned_thread_ids", "sweep"]
