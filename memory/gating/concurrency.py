"""Concurrent writes to one user's memory, resolved by the conflict policy, never lost.

`ingest_apply.apply_resolution` (the write path of the agent, the CLI and the agent bus) runs
under `user_write_lock`, so two writers of the same slot on two connections are serialised: the
second sees the first and `conflicts.resolve` decides: last-write-wins, merge, mark-as-conflict,
or the default policy. A losing write is kept as a superseded row linked to the winner, a merge
keeps both texts, and every conflict is a `conflict` event in `memory_events`.

`write_with_policy` is that path for a memory that did not come through the gate as a user's
statement (an agent's published knowledge, an import).
"""

from __future__ import annotations

from memory.gating.gate import GateDecision, Trust
from memory.gating.ingest_apply import ConflictStrategy, Outcome, apply_resolution
from memory.storage.store import MemoryStore
from memory.storage.user_locks import WriteLockTimeout, hash32, lock_key, user_write_lock
from memory.types import NewMemory, Scope


def _decision(item: NewMemory, reason: str) -> GateDecision:
    trust: Trust = "low" if item.provenance.get("trust") == "low" else "normal"
    return GateDecision(
        keep=True,
        category=item.category,
        kind=item.kind,
        importance=item.importance,
        confidence=item.confidence,
        origin=item.origin,
        reason=reason or "stored",
        content=item.content,
        trust=trust,
        ttl_days=item.ttl_days,
    )


async def write_with_policy(
    store: MemoryStore,
    scope: Scope,
    item: NewMemory,
    *,
    strategy: ConflictStrategy = "policy",
    reason: str = "",
) -> Outcome:
    """Write `item` for the user, resolved against their similar memories under the user lock."""
    return await apply_resolution(store, scope, _decision(item, reason), item, strategy)


__all__ = [
    "ConflictStrategy",
    "Outcome",
    "WriteLockTimeout",
    "hash32",
    "lock_key",
    "user_write_lock",
    "write_with_policy",
]
