"""What one message may write: pastes become one short episode, and every message is bounded.

A message that holds machine text (`gating.machine_text`) is judged in two parts: its prose as
any turn is (a lesson stated around a log may still be a lesson), its pastes as one low-trust
episodic memory that says what was pasted, redacted like everything else. A paste is never a
preference, rule or procedure, and never one memory per line. Every message, paste or not,
writes at most `MAX_MEMORIES_PER_MESSAGE` memories and `MAX_DROP_EVENTS` drop events, so no
message can flood the store or the audit log.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import replace

from memory.gating.decision import GateDecision, GatePolicy, Role
from memory.gating.machine_text import Parts
from memory.gating.privacy import PrivacyFilter
from memory.gating.rules.decide import screen
from memory.storage.store import AuditEvent
from memory.types import Category, MemoryKind, Origin

# A message with a paste keeps at most the paste's account and two statements of its prose
# (the lesson and its cause, say): the prose around a paste is a sentence or two.
MAX_MEMORIES_PER_PASTE = 3
PASTED = "pasted"  # how the reason of a paste's account begins (`is_paste_account`)
# A list typed by hand (one fact a line) rarely runs past a dozen; past that a message is a
# document, and each memory costs an embedding and a conflict search on the write path.
MAX_MEMORIES_PER_MESSAGE = 12
# Drop events recorded one by one per message; the rest are counted in one more event.
MAX_DROP_EVENTS = 4
# Each written memory adds its write event and, on a conflict, one event per memory involved
# (at most the conflict policy's few candidates): this bounds a message's audit trail.
MAX_EVENTS_PER_WRITE = 4
MAX_AUDIT_EVENTS_PER_MESSAGE = MAX_MEMORIES_PER_MESSAGE * MAX_EVENTS_PER_WRITE + MAX_DROP_EVENTS
MAX_AUDIT_EVENTS_PER_PASTE = MAX_MEMORIES_PER_PASTE * MAX_EVENTS_PER_WRITE + MAX_DROP_EVENTS

_VERBS: dict[Role, str] = {"user": "pasted", "system": "pasted", "tool": "returned"}


def paste_decision(
    parts: Parts,
    *,
    role: Role,
    policy: GatePolicy,
    privacy: PrivacyFilter,
    explicit: bool = False,
) -> tuple[str, GateDecision] | None:
    """The one memory a message's pastes make (the raw pastes, the decision), or None.

    The largest paste is described; any others are counted. The account goes through the
    same screen as any memory (redaction, secrets, instruction-like text). The agent's own
    code is not something learnt about the user: an assistant's pastes make nothing.
    """
    if not parts.pastes or role == "assistant":
        return None
    largest = max(parts.pastes, key=lambda p: len(p.lines))
    account = largest.describe(privacy.clean, verb=_VERBS[role])
    if len(parts.pastes) > 1:
        account += f" and {len(parts.pastes) - 1} more pasted block(s)"
    raw = "\n".join("\n".join(p.lines) for p in parts.pastes)
    content, findings, verdict = screen(account, role, policy, privacy)
    if verdict is not None:
        return raw, verdict
    decision = GateDecision(
        keep=True,
        category=Category.FACT,
        kind=MemoryKind.EPISODIC,
        importance=policy.keep_threshold if explicit else policy.low_trust_max_importance,
        confidence=0.9,
        origin=Origin.EXPLICIT if explicit else Origin.INFERRED,
        reason=f"{PASTED} {largest.kind}: kept as one episode, never as a rule or preference",
        content=content,
        # Machine text is not the user's word: like tool output, it never steers anything.
        trust="low",
        ttl_days=policy.ttl_for(Category.FACT) if explicit else policy.low_trust_ttl_days,
        findings=findings,
    )
    return raw, decision


def is_paste_account(decision: GateDecision) -> bool:
    """Whether `decision` is the account of a message's pastes (`paste_decision`)."""
    return decision.reason.startswith(f"{PASTED} ")


def bounded(
    decided: list[tuple[str, GateDecision]], *, pasted: bool
) -> list[tuple[str, GateDecision]]:
    """`decided` with at most the message's bound kept: the most important, in message order.

    `pasted`: the last of `decided` is the account of the message's pastes (`paste_decision`);
    it is always among those kept, when the screen let it through.
    """
    limit = MAX_MEMORIES_PER_PASTE if pasted else MAX_MEMORIES_PER_MESSAGE
    kept = [i for i, (_, d) in enumerate(decided) if d.keep]
    if len(kept) <= limit:
        return decided
    account = kept[-1] if pasted and decided[-1][1].keep else None
    rest = [i for i in kept if i != account]
    room = limit - (account is not None)
    chosen = set(sorted(rest, key=lambda i: -decided[i][1].importance)[:room])
    if account is not None:
        chosen.add(account)
    reason = f"past the {limit} memories one message may write; not stored"
    return [
        (c, d if i in chosen or not d.keep else replace(d, keep=False, reason=reason))
        for i, (c, d) in enumerate(decided)
    ]


def bounded_drops(drops: list[AuditEvent]) -> list[AuditEvent]:
    """At most `MAX_DROP_EVENTS` events for a message's drops: the first ones, then a count."""
    if len(drops) <= MAX_DROP_EVENTS:
        return drops
    head, rest = drops[: MAX_DROP_EVENTS - 1], drops[MAX_DROP_EVENTS - 1 :]
    reasons = Counter(e.reason for e in rest)
    digest = hashlib.sha256()
    for event in rest:
        digest.update(str(event.detail.get("digest", "")).encode())
    detail = {
        "count": len(rest),
        "reasons": dict(reasons.most_common(3)),
        "digest": digest.hexdigest()[:16],
    }
    reason = f"{len(rest)} more statements of this message dropped"
    return [*head, AuditEvent(None, "gate_drop", reason, detail)]
