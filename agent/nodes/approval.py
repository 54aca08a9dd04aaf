"""await_approval: high-risk memories wait for a human.

They were stored as `pending_approval` (never recalled); the run interrupts with their content
and resumes with `Command(resume={"approve": [...ids], "reject": [...ids]})`, or with
`"approve"` / `"reject"` for all of them.
"""

from __future__ import annotations

from typing import Any

from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from agent.context import Context
from agent.identity import resolve_scope
from agent.resources import get_store
from agent.state import State
from memory.types import Status


def _split(answer: Any, ids: list[str]) -> tuple[set[str], set[str]]:
    if isinstance(answer, str):
        return (
            (set(ids), set()) if answer.lower() in ("approve", "yes", "ok") else (set(), set(ids))
        )
    if isinstance(answer, dict):
        approve = {i for i in answer.get("approve", []) if i in ids}
        reject = {i for i in answer.get("reject", []) if i in ids}
        if answer.get("decision") in ("approve", "reject"):
            everything = set(ids) - approve - reject
            (approve if answer["decision"] == "approve" else reject).update(everything)
        # Anything the human did not mention is rejected: high-risk memories need a yes.
        return approve, set(ids) - approve
    return set(), set(ids)


async def await_approval(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Interrupt for a decision on pending memories, then activate or drop them."""
    config = get_config()
    pending = state.get("pending_approval") or []
    ids = [str(p["id"]) for p in pending]
    answer = interrupt({"type": "memory_approval", "memories": pending})
    approve, reject = _split(answer, ids)
    store = await get_store(config)
    scope = resolve_scope(runtime.context or Context(), config)
    for mid in approve:
        await store.set_status(
            scope, mid, Status.ACTIVE, reason="approved by a human", event="approve"
        )
    for mid in reject:
        await store.delete(scope, mid, reason="rejected by a human")
    return {"pending_approval": []}
