"""Durable agent events become memories, with the gate's low-trust rules.

What an agent publishes is not something a user said: it is never an explicit preference. It is
kept as low-trust content (importance capped, the low-trust TTL, origin INFERRED, so a user's
explicit statement always wins a conflict with it), redacted, refused when it carries high-risk
secrets or reads like an instruction to the system, and written through the per-user conflict
path, so two agents learning contradicting things are resolved and logged like any conflict.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memory.gating.gate import GatePolicy, gate, is_instruction_like
from memory.gating.ingest.apply import ConflictStrategy, write_with_policy
from memory.gating.privacy import PrivacyFilter
from memory.sharing.events import SHARED_USER
from memory.storage.forget import DERIVED_FROM
from memory.storage.forget_one import SOURCE_MEMORY
from memory.storage.store import MemoryStore
from memory.types import Category, MemoryKind, NewMemory, Origin, Scope, Source

_TEXT_KEYS = ("content", "summary", "text", "knowledge", "task", "result")
_MAX_CONTENT = 4_000


@dataclass(frozen=True, slots=True)
class PersistPolicy:
    """How durable events are stored."""

    gate: GatePolicy = field(default_factory=GatePolicy)
    privacy: PrivacyFilter | None = None
    strategy: ConflictStrategy = "policy"


def event_text(data: Mapping[str, Any]) -> str:
    """The memory text of an event: its first text field, else its compact JSON."""
    for key in _TEXT_KEYS:
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()[:_MAX_CONTENT]
    return json.dumps(data, ensure_ascii=False, sort_keys=True)[:_MAX_CONTENT]


def _new_memory(
    event_type: str,
    agent_id: str,
    text: str,
    data: Mapping[str, Any],
    policy: GatePolicy,
    privacy: PrivacyFilter,
) -> NewMemory:
    knowledge = event_type == "knowledge_learned"
    decision = gate(text, role="tool", policy=policy, privacy=privacy)
    category = decision.category if decision.category is not Category.NOISE else Category.FACT
    outcome = data.get("outcome")
    return NewMemory(
        content=decision.content or text,
        kind=MemoryKind.SEMANTIC if knowledge else MemoryKind.EPISODIC,
        source=Source.TOOL if knowledge else Source.SYSTEM,
        origin=Origin.INFERRED,
        category=category,
        importance=min(max(decision.importance, 0.1), policy.low_trust_max_importance),
        confidence=min(decision.confidence, 0.6),
        ttl_days=policy.low_trust_ttl_days,
        context=f"{event_type} published by agent {agent_id}",
        outcome=outcome if isinstance(outcome, str) else "",
        provenance={
            "agent_id": agent_id,
            "event_type": event_type,
            "trust": "low",
            # A copy of a user's memory names its source only by digest, for forget to find.
            **({DERIVED_FROM: source} if isinstance(source := data.get(DERIVED_FROM), str) else {}),
            # ... and the memory it copies, for that memory's deletion to retract it.
            **({SOURCE_MEMORY: mid} if isinstance(mid := data.get(SOURCE_MEMORY), str) else {}),
        },
        tags=[f"agent:{agent_id}", event_type],
    )


def _refusal(high_risk: bool, text: str) -> str:
    if high_risk:
        return "high-risk secret: not stored, even redacted"
    if is_instruction_like(text):
        return "instruction-like text; never stored as a rule"
    return ""


async def persist_event(
    store: MemoryStore,
    tenant_id: str,
    agent_id: str,
    event_type: str,
    data: Mapping[str, Any],
    user_id: str | None,
    policy: PersistPolicy,
) -> str | None:
    """Store a durable event as a memory; its id, or None when the rules refuse it."""
    scope = Scope(tenant_id, user_id or SHARED_USER)
    privacy = policy.privacy or PrivacyFilter()
    redaction = privacy.redact(event_text(data))
    text = redaction.text.strip()
    refused = _refusal(redaction.high_risk, text)
    if not refused and user_id and not await store.consent(scope):
        refused = "no consent to store memories"
    if refused or not text:
        detail = {"agent_id": agent_id, "event_type": event_type}
        await store.record_event(scope, None, "gate_drop", refused or "empty event", detail)
        return None
    item = _new_memory(event_type, agent_id, text, data, policy.gate, privacy)
    reason = f"{event_type} from agent {agent_id}"
    outcome = await write_with_policy(store, scope, item, strategy=policy.strategy, reason=reason)
    return outcome.memory_id
