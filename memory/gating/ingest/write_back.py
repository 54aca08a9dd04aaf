"""The write-back path shared by the agent's gate_and_store node and `memory-agent remember`.

candidate statements → gate (classify, score, redact, poisoning rules) → consent → near-duplicate
and conflict resolution against this user's existing memories → write (or pending approval).
Every decision, including a drop, lands in the audit log with its reason (never the dropped
text itself: it may be the very thing the user did not want kept).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memory.attribute_meaning import sets_attribute
from memory.attributes import settings
from memory.gating.gate import (
    GateDecision,
    GatePolicy,
    Role,
    gate,
    gate_all_with_model,
    split_candidates,
)
from memory.gating.ingest.apply import ConflictStrategy, apply_resolution
from memory.gating.ingest.pastes import (
    MAX_MEMORIES_PER_MESSAGE,
    MAX_MEMORIES_PER_PASTE,
    bounded,
    bounded_drops,
    is_paste_account,
    paste_decision,
)
from memory.gating.ingest.second_look import kept_as_update, worth_a_look
from memory.gating.machine_text import split_pastes
from memory.gating.privacy import PrivacyFilter
from memory.gating.update_model import UpdateReader
from memory.offload import run_cpu
from memory.storage.store import MAX_CONTENT_CHARS, AuditEvent, MemoryStore
from memory.types import NewMemory, Scope, Source, Status

if TYPE_CHECKING:
    # Only a type here: importing LangChain costs the CLI's `remember` ~1 s.
    from langchain_core.language_models import BaseChatModel

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class IngestResult:
    """What happened to one candidate statement."""

    action: str  # stored / dropped / reinforced / superseded / merged / rejected / conflict /
    #              pending_approval / no_consent
    decision: GateDecision
    memory_id: str | None
    reason: str
    related_ids: tuple[str, ...] = ()


def to_new_memory(
    decision: GateDecision,
    *,
    source: Source,
    provenance: Mapping[str, Any],
    occurred_at: datetime | None,
    require_approval: bool,
) -> NewMemory:
    """The row to write for a kept gate decision."""
    pending = require_approval and decision.needs_approval
    # A statement that sets an attribute ("I live in Berlin", "我在腾讯工作") holds until an
    # update replaces it (closing its window), not until a lifetime runs out.
    ttl = decision.ttl_days
    if ttl is not None and decision.trust != "low" and settings(decision.content):
        ttl = None
    return NewMemory(
        content=decision.content,
        kind=decision.kind,
        source=source,
        origin=decision.origin,
        category=decision.category,
        importance=decision.importance,
        confidence=decision.confidence,
        ttl_days=ttl,
        occurred_at=occurred_at,
        status=Status.PENDING_APPROVAL if pending else Status.ACTIVE,
        provenance={**provenance, "trust": decision.trust},
        tags=["pii-redacted"] if decision.findings else [],
    )


def _rules_gate_all(
    text: str,
    *,
    role: Role,
    policy: GatePolicy,
    privacy: PrivacyFilter,
    context: str | None,
    reply: str | None,
    explicit: bool,
) -> list[tuple[str, GateDecision]]:
    """Split `text` and gate every candidate by the rules: one hop off the event loop for all.

    Module-level and on plain data, so a large text can run in the process pool. Pasted
    machine text is set apart (`ingest.pastes`): the prose is judged as usual (not as an
    explicit request when a paste came with it), the paste becomes one account of itself.
    """
    parts = split_pastes(text)
    explicit_prose = explicit and not parts.pastes
    decided = [
        (c, gate(c, role=role, policy=policy, privacy=privacy, context=context, reply=reply,
                 explicit=explicit_prose))
        for c in split_candidates(parts.prose)
    ]  # fmt: skip
    pasted = paste_decision(parts, role=role, policy=policy, privacy=privacy, explicit=explicit)
    return bounded(decided + ([pasted] if pasted else []), pasted=pasted is not None)


async def _decide_all(
    text: str,
    role: Role,
    model: BaseChatModel | None,
    policy: GatePolicy,
    privacy: PrivacyFilter,
    exchange: tuple[str | None, str | None],
    explicit: bool,
) -> list[tuple[str, GateDecision]]:
    """Each candidate statement of `text` with the gate's decision on it, in order.

    The rules gate is pure CPU on user text (seconds for a huge paste): off the event loop. It
    reads nothing but its arguments, so all candidates are split and judged in one thread (or
    process) hop; each hop waits its turn in a pool (0.5-2.5 ms on a loaded machine), and a
    turn made two or more. An explicit request needs no judgement of importance: the rules'
    screen (secrets, instruction-like text) and small-talk check decide, with no model call.
    Otherwise a gate model judges the candidates one by one.
    """
    if model is None or explicit:
        context, reply = exchange
        return await run_cpu(
            _rules_gate_all,
            text,
            size=len(text) + len(context or "") + len(reply or ""),
            role=role,
            policy=policy,
            privacy=privacy,
            context=context,
            reply=reply,
            explicit=explicit,
        )
    context, reply = exchange
    candidates, pasted = await run_cpu(
        _split_for_model, text, size=len(text), role=role, policy=policy, privacy=privacy
    )
    # A model may find up to MAX_MODEL_MEMORIES memories in one candidate: each is written.
    decided = [
        (c, decision)
        for c in candidates
        for decision in await gate_all_with_model(model, c, role=role, policy=policy,
                                                  privacy=privacy, context=context, reply=reply)
    ]  # fmt: skip
    return bounded(decided + ([pasted] if pasted else []), pasted=pasted is not None)


def _split_for_model(
    text: str, *, role: Role, policy: GatePolicy, privacy: PrivacyFilter
) -> tuple[list[str], tuple[str, GateDecision] | None]:
    """The prose's candidate statements for a gate model, and the pastes' account (one hop)."""
    parts = split_pastes(text)
    pasted = paste_decision(parts, role=role, policy=policy, privacy=privacy)
    return split_candidates(parts.prose), pasted


async def ingest_text(
    store: MemoryStore,
    scope: Scope,
    text: str,
    *,
    role: Role = "user",
    context: str | None = None,
    reply: str | None = None,
    source: Source = Source.CHAT,
    provenance: Mapping[str, Any] | None = None,
    occurred_at: datetime | None = None,
    gate_model: BaseChatModel | None = None,
    policy: GatePolicy | None = None,
    privacy: PrivacyFilter | None = None,
    conflict_strategy: ConflictStrategy = "policy",
    require_approval: bool = True,
    explicit: bool = False,
) -> list[IngestResult]:
    """Gate every candidate statement in `text` and write what deserves to be remembered.

    `explicit` says the user asked for this to be remembered (the `remember` command): it is
    kept unless unsafe or empty small talk.

    `context` is the turn being answered (usually the agent's last message): it lets the gate
    keep a terse answer such as "Max and Daisy." to "What are your dogs called?". `reply` is
    the response the text got (the agent's answer): interest in it marks news. Neither is stored.
    """
    policy = policy or GatePolicy()
    privacy = privacy or PrivacyFilter()
    # The consent lookup (a round trip to Postgres) runs while the gate works in its thread.
    asking = asyncio.ensure_future(store.consent(scope))
    try:
        decided = await _decide_all(
            text, role, gate_model, policy, privacy, (context, reply), explicit
        )
        consent = await asking
    finally:
        if not asking.done():
            asking.cancel()
        elif not asking.cancelled():
            asking.exception()  # retrieved: a failed lookup is not also logged as unhandled
    results: list[IngestResult] = []
    drops: list[AuditEvent] = []
    # The gate model also reads what each kept statement replaces of what was said before.
    reader = None
    if gate_model is not None and policy.model_reads_updates:
        reader = UpdateReader(gate_model, policy.model_timeout_s)
    try:
        await _write_all(store, scope, decided, consent, results, drops, source=source,
                         provenance=provenance, occurred_at=occurred_at,
                         require_approval=require_approval,
                         conflict_strategy=conflict_strategy, role=role,
                         policy=policy, reader=reader)  # fmt: skip
    finally:
        # One round trip for a turn's drops, also when a later write failed; a message's
        # drops are a bounded few events however many statements it had.
        await store.record_events(scope, bounded_drops(drops))
    return results


async def _write_all(
    store: MemoryStore,
    scope: Scope,
    decided: list[tuple[str, GateDecision]],
    consent: bool,
    results: list[IngestResult],
    drops: list[AuditEvent],
    *,
    source: Source,
    provenance: Mapping[str, Any] | None,
    occurred_at: datetime | None,
    require_approval: bool,
    conflict_strategy: ConflictStrategy,
    role: Role = "user",
    policy: GatePolicy | None = None,
    reader: UpdateReader | None = None,
) -> None:
    """Write each kept candidate in order; each dropped one's audit event goes to `drops`."""
    # A second look keeps a dropped statement only within the message's bound on writes, and
    # reads (embeds) at most that many: a message of a thousand short statements costs a few.
    pasted = any(is_paste_account(d) for _, d in decided)
    bound = MAX_MEMORIES_PER_PASTE if pasted else MAX_MEMORIES_PER_MESSAGE
    room, looks = bound - sum(d.keep for _, d in decided), bound
    # Patterns on user text run off the event loop (a message may hold a thousand statements).
    worth = await asyncio.to_thread(lambda: [worth_a_look(d, role) for _, d in decided])
    for (candidate, dropped), look in zip(decided, worth, strict=True):
        decision = dropped
        if look is not None and consent and room > 0 and looks > 0:
            looks -= 1
            second = await kept_as_update(store, scope, dropped, look,
                                          policy=policy or GatePolicy(),
                                          strategy=conflict_strategy)  # fmt: skip
            decision = second or dropped
            room -= second is not None
        too_long = decision.keep and len(decision.content) > MAX_CONTENT_CHARS
        if not decision.keep or not consent or too_long:
            # A text the gate would keep but that is longer than one memory may be (an
            # unpunctuated paste) is not stored: the turn goes on, the message stays in the
            # thread, and the audit log says why.
            if too_long:
                reason = (
                    f"too long for one memory ({len(decision.content):,} characters, at most "
                    f"{MAX_CONTENT_CHARS:,}); not stored"
                )
            elif decision.keep is False:
                reason = decision.reason
            else:
                reason = "no consent to store memories"
            action = "dropped" if not decision.keep or too_long else "no_consent"
            drops.append(_drop_event(decision, reason, store.index.text_digest(candidate)))
            results.append(IngestResult(action, decision, None, reason))
            continue
        item = to_new_memory(
            await _holds_until_replaced(store, decision),
            source=source,
            provenance=provenance or {},
            occurred_at=occurred_at,
            require_approval=require_approval,
        )
        results.append(await _write(store, scope, decision, item, conflict_strategy, reader))


async def _holds_until_replaced(store: MemoryStore, decision: GateDecision) -> GateDecision:
    """The gate's decision without its default lifetime when it sets an attribute, by meaning.

    "I've been at Zalando since June" holds until an update replaces it, as what the patterns
    read does (`to_new_memory`). Only the gate's default lifetime is dropped this way: a
    lifetime a caller asked for (a store put's `ttl`) never passes here.
    """
    if decision.ttl_days is None or decision.trust == "low" or settings(decision.content):
        return decision
    sets = await asyncio.to_thread(sets_attribute, decision.content, store.embedder.embed)
    return replace(decision, ttl_days=None) if sets else decision


async def _write(
    store: MemoryStore,
    scope: Scope,
    decision: GateDecision,
    item: NewMemory,
    strategy: ConflictStrategy,
    reader: UpdateReader | None = None,
) -> IngestResult:
    outcome = await apply_resolution(
        store, scope, item, strategy, reason=decision.reason, reader=reader
    )
    return IngestResult(
        outcome.action, decision, outcome.memory_id, outcome.reason, outcome.related_ids
    )


def _drop_event(decision: GateDecision, reason: str, digest: str) -> AuditEvent:
    # The keyed digest lets the server match a complaint ("you kept X") without keeping X.
    detail = {"category": decision.category.value, "digest": digest}
    return AuditEvent(None, "gate_drop", reason, detail)
