"""A statement the rules gate dropped as small talk, kept when it updates what the user said.

"Mornings are green tea now." or "These days it's a parrot that keeps me company." names no
first person, so the rules gate reads it as small talk; said after "I drink coffee every
morning" or "I have a golden retriever", it is the newest value of an attribute the user
stated. Such a statement gets a second look: when it says that something changed, reads as
setting an attribute (`memory.attribute_meaning`), and the conflict policy finds that it
replaces one of the user's memories, it is kept as a fact. Alone, with nothing it updates, it
stays dropped, so chat that only sounds like news is not stored.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from memory.attribute_meaning import MAX_CHARS, marks_change, sets_attribute
from memory.gating.decision import GateDecision, GatePolicy
from memory.gating.gate import Role
from memory.gating.ingest.apply import ConflictStrategy, decide
from memory.gating.rules.decide import kept_text, kind_for
from memory.gating.rules.meaning import asks
from memory.gating.rules.signals import NOISE
from memory.storage.store import MemoryStore
from memory.types import Category, NewMemory, Scope, Source

REASON = "updates a value the user stated before, read by meaning (fact)"


def _candidate(decision: GateDecision, role: Role) -> bool:
    content = decision.content
    return (
        role == "user"
        and not decision.keep
        and decision.reason.startswith(NOISE.reason)
        and not decision.findings
        and 0 < len(content) <= MAX_CHARS
        and marks_change(content)
        and not asks(content)
    )


async def kept_as_update(
    store: MemoryStore,
    scope: Scope,
    decision: GateDecision,
    *,
    role: Role,
    policy: GatePolicy,
    strategy: ConflictStrategy,
) -> GateDecision | None:
    """The decision to keep `decision`'s statement as a fact, or None to leave it dropped."""
    if not _candidate(decision, role):
        return None
    content = decision.content
    if not await asyncio.to_thread(sets_attribute, content, store.embedder.embed):
        return None
    kept = replace(
        decision,
        keep=True,
        category=Category.FACT,
        kind=kind_for(Category.FACT, "user"),
        importance=round(max(decision.importance, policy.keep_threshold), 3),
        reason=REASON,
        content=kept_text(content, "user"),
        ttl_days=None,  # it sets an attribute: it holds until an update replaces it
    )
    item = NewMemory(content=kept.content, kind=kept.kind, source=Source.CHAT,
                     origin=kept.origin, category=kept.category)  # fmt: skip
    verdict = await decide(store, scope, item, strategy)
    return kept if verdict.action == "supersede" and verdict.conflict else None
