"""await_approval: high-risk memories wait for a human.

They were stored as `pending_approval` (never recalled); the run interrupts with their content
and the accepted answers (`RESUME_VALUES`), and resumes with `Command(resume="approve")` or
`"reject"` for all of them, or `{"approve": [...ids], "reject": [...ids]}`. Any other answer
interrupts again with an error; it never rejects. What needs approval is the gate's policy
(`memory.gating.rules.turn.needs_approval`, docs/security.md).
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

_YES = ("approve", "approved", "yes", "y", "ok")
_NO = ("reject", "rejected", "no", "n")
# Shown in the interrupt, so Studio and SDK users see what they may answer.
RESUME_VALUES = {
    "approve": "store every memory listed",
    "reject": "store none of them",
    '{"approve": [ids], "reject": [ids]}': "decide per memory; an id not listed is rejected",
}


def parse_answer(answer: Any, ids: list[str]) -> tuple[set[str], set[str]] | str:
    """(approved, rejected) ids, or why `answer` is not an accepted resume value.

    An answer that is none of `RESUME_VALUES` is not taken as a no: a typo must not delete
    what the user meant to keep, so the node asks again.
    """
    if isinstance(answer, str):
        word = answer.strip().lower()
        if word in _YES:
            return set(ids), set()
        if word in _NO:
            return set(), set(ids)
        return f"unknown answer {answer[:40]!r}"
    if isinstance(answer, dict):
        unknown_keys = sorted(str(k)[:40] for k in answer if k not in ("approve", "reject"))
        if unknown_keys:
            return f"unknown key(s) {', '.join(unknown_keys)}"
        chosen = {k: answer.get(k, []) for k in ("approve", "reject")}
        if not all(isinstance(v, list) for v in chosen.values()):
            return "approve and reject must be lists of memory ids"
        named = {str(i) for v in chosen.values() for i in v}
        if stray := sorted(named - set(ids)):
            return f"not a pending memory: {', '.join(i[:40] for i in stray[:5])}"
        approve = {str(i) for i in chosen["approve"]} - {str(i) for i in chosen["reject"]}
        # Anything the human did not approve is rejected: high-risk memories need a yes.
        return approve, set(ids) - approve
    return f"an answer of type {type(answer).__name__}"


async def await_approval(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Interrupt for a decision on pending memories, then activate or drop them."""
    config = get_config()
    pending = state.get("pending_approval") or []
    ids = [str(p["id"]) for p in pending]
    payload = {"type": "memory_approval", "memories": pending, "resume_values": RESUME_VALUES}
    parsed = parse_answer(interrupt(payload), ids)
    while isinstance(parsed, str):
        # LangGraph's pattern for validating a human's answer: interrupt again, in this node.
        parsed = parse_answer(
            interrupt({**payload, "error": f"{parsed}; nothing was decided"}), ids
        )
    approve, reject = parsed
    store = await get_store(config)
    scope = resolve_scope(runtime.context or Context(), config)
    for mid in approve:
        await store.set_status(
            scope, mid, Status.ACTIVE, reason="approved by a human", event="approve"
        )
    for mid in reject:
        await store.delete(scope, mid, reason="rejected by a human")
    return {"pending_approval": []}
