"""recall: search this user's episodic and long-term memory, ranked, with reasons."""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph.config import get_config
from langgraph.runtime import Runtime

from agent.context import Context
from agent.identity import resolve_scope
from agent.images import image_evidence
from agent.nodes.query import query_of
from agent.resources import get_store
from agent.shared_memory import recall_shared
from agent.state import State
from memory.gating.gate import is_instruction_like
from memory.longterm.profile import load_profile, profile_rules
from memory.storage.timeline import window_text
from memory.system import recaller
from memory.types import MemoryKind, MemoryRecord, ScoredMemory
from memory.working.prompt_sections import EvidenceItem, PrefItem

LONG_TERM = (MemoryKind.PREFERENCE, MemoryKind.PROCEDURAL, MemoryKind.SEMANTIC)


def _as_item(rec: MemoryRecord, score: float | None = None) -> EvidenceItem:
    # A value an update replaced is cited with the window it held in, so the model answers a
    # question about the past with it and never mistakes it for the current value.
    kind = rec.kind.value
    if rec.valid_to is not None:
        kind = f"{kind}, held {window_text(rec)}, since replaced"
    return EvidenceItem(
        id=rec.id,
        date=rec.occurred_at.date().isoformat(),
        kind=kind,
        content=rec.content,
        score=round(rec.confidence if score is None else score, 4),
    )


def _evidence(hit: ScoredMemory) -> EvidenceItem:
    return _as_item(hit.record, hit.score)


def _followable(rec: MemoryRecord) -> bool:
    """A memory the prompt may present as a rule: normal trust and not an attempt to steer.

    The gate already keeps such text out of rules; this also covers rows written before that
    check or by another path (an import, a direct write), so a stored poisoning attempt is
    never put under the preferences the model is told to follow.
    """
    return rec.provenance.get("trust", "normal") != "low" and not is_instruction_like(rec.content)


def _preference(rec: MemoryRecord) -> PrefItem:
    return PrefItem(key=rec.category.value, value=rec.content, confidence=rec.confidence)


async def recall(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Load long-term rules for this user and the top-k evidence for this turn."""
    config = get_config()
    ctx = runtime.context or Context()
    scope = resolve_scope(ctx, config)
    store = await get_store(config)
    query = query_of(state)
    # Independent reads, each mostly waiting on Postgres or Chroma: side by side, a turn waits
    # for the slowest instead of their sum. The user's recall and the tenant's shared recall
    # embed the same query at the same moment: the embedder computes it once for both, while
    # each checks its user's version. Image matches: with an image embedding model only.
    found, images, shared = await asyncio.gather(
        recaller(store).recall_turn(scope, query, k=ctx.recall_k, weights=ctx.ranking()),
        image_evidence(store, scope, query, k=ctx.recall_k),
        recall_shared(store, scope, query, ctx.recall_shared_k),
    )
    hits, long_term = found.hits, [r for r in found.rules if _followable(r)]
    profile = await load_profile(store, scope, version=found.version)
    # The structured profile states its source memories as rules; the rest follow as they are.
    sources = {f.memory_id for f in profile.fields.values()}
    rules = [
        PrefItem(key=f"profile:{name}", value=text, confidence=field.confidence)
        for (name, field), text in zip(profile.fields.items(), profile_rules(profile), strict=True)
    ]
    rule_ids = {r.id for r in long_term}
    evidence = [_evidence(h) for h in hits if h.record.id not in rule_ids]
    # With an image embedding model, images the words match but their descriptions do not.
    seen = {e["id"] for e in evidence}
    evidence += [_as_item(rec, score) for rec, score in images if rec.id not in seen]
    # The tenant's shared agent memory, beside the user's own and labelled by its agent.
    evidence += shared
    return {
        "preferences": rules + [_preference(r) for r in long_term if r.id not in sources],
        "rules_recalled": [_as_item(r) for r in long_term],
        # Flagged text is not evidence either: it would reach the model verbatim.
        "evidence": [e for e in evidence if not is_instruction_like(e["content"])],
    }
