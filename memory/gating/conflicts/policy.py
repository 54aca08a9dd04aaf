"""Conflict policy for an incoming gated memory against similar active ones (pure functions).

Strategies: last-write-wins, merge, mark-as-conflict, or the default policy: an explicit statement
beats an inference (what the user said outranks what was guessed about them), a newer explicit
statement beats an older one, pinned business rules are never overridden from chat, list-like
memories are merged, and a near-duplicate updates the existing memory instead of adding a copy. The
caller writes the outcome and logs every conflict to the audit log.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from memory.gating.conflicts.frames import Frame, analyse, merge_text
from memory.gating.conflicts.relation import (
    UNRELATED,
    EmbedFn,
    Relation,
    ToReference,
    attribute_slot,
    decisive,
    relate,
)
from memory.types import Category, Origin

Action = Literal["insert", "update_existing", "supersede", "reject", "merge", "mark_conflict"]
Strategy = Literal["policy", "last_write_wins", "merge", "mark_conflict"]
# Explicit statements outrank what consolidation learned, which outranks a one-off inference.
_ORIGIN_RANK = {Origin.EXPLICIT: 2, Origin.LEARNED: 1, Origin.INFERRED: 0}


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Candidate:
    """The incoming, already gated and redacted memory."""

    content: str
    category: Category
    origin: Origin = Origin.EXPLICIT
    created_at: datetime = field(default_factory=_now)


@dataclass(frozen=True, slots=True)
class Existing:
    """An active memory similar to the candidate, with its cosine similarity to it."""

    id: str
    content: str
    similarity: float
    origin: Origin
    category: Category
    created_at: datetime
    pinned: bool = False


@dataclass(frozen=True, slots=True)
class Resolution:
    """What to do with the candidate, which existing memories it affects, and why."""

    action: Action
    target_ids: tuple[str, ...] = ()
    merged_content: str | None = None
    reason: str = ""
    # True when the candidate contradicts a memory (the caller's audit log records these).
    conflict: bool = False


def resolve(
    incoming: Candidate,
    existing: Sequence[Existing],
    *,
    dup_threshold: float = 0.92,
    strategy: Strategy = "policy",
    embed: EmbedFn | None = None,
    to_reference: ToReference | None = None,
) -> Resolution:
    """Decide how `incoming` enters the store given `existing` similar memories.

    `embed` (e.g. `Embedder.embed`) lets the detector tell values of one type ("coffee" vs
    "tea") from unrelated ones; without it only correction markers, shared words and numbers
    reveal a contradiction. `existing` similarities are on the reference cosine scale, and
    `to_reference` maps the embedder's raw cosines onto it (`memory.storage.calibration`).
    """
    new = analyse(incoming.content)
    relations = [_relate(new, incoming, e, dup_threshold, embed, to_reference) for e in existing]
    contradicting = [i for i, r in enumerate(relations) if r.kind == "contradiction"]
    if contradicting:
        return _contradiction(incoming, existing, relations, contradicting, strategy)
    lists = [i for i, r in enumerate(relations) if r.kind == "list_add"]
    if lists:
        return _merge_into(existing[max(lists, key=lambda i: relations[i].strength)], new)
    dups = [i for i, r in enumerate(relations) if r.kind == "duplicate"]
    if dups:
        best = existing[max(dups, key=lambda i: existing[i].similarity)]
        return Resolution("update_existing", (best.id,), None, relations[dups[0]].why)
    return Resolution("insert", reason="no duplicate or conflicting memory")


def resolve_by_reading(
    incoming: Candidate,
    existing: Sequence[Existing],
    rules: Resolution,
    replaces: frozenset[int],
    agrees: frozenset[int],
    *,
    strategy: Strategy = "policy",
) -> Resolution:
    """The verdict when a model read which of `existing` the incoming statement replaces.

    The model decides what is a contradiction; the policy still decides what a contradiction
    does (a pinned rule is never overridden, an inference never beats what the user said).
    Only memories that set attributes can be replaced, as with the rules. Where the model sees
    no replacement, a contradiction the rules saw is dropped: the statement reinforces one it
    agrees with, or is stored beside them; the rules' other verdicts (a duplicate, a list to
    extend) stand.
    """
    targets = [
        i for i in sorted(replaces) if attribute_slot(incoming.category, existing[i].category)
    ]
    if targets:
        relations = [
            Relation("contradiction", 1.0, "the gate model: the same attribute, a new value")
            if i in targets
            else UNRELATED
            for i in range(len(existing))
        ]
        return _contradiction(incoming, existing, relations, targets, strategy)
    if not rules.conflict:
        return rules
    agreeing = [existing[i] for i in agrees]
    if agreeing:
        best = max(agreeing, key=lambda e: e.similarity)
        return Resolution("update_existing", (best.id,), None, "the gate model: agrees")
    return Resolution("insert", reason="the gate model: replaces nothing")


def _relate(
    new: Frame,
    incoming: Candidate,
    old: Existing,
    dup: float,
    embed: EmbedFn | None,
    to_reference: ToReference | None,
) -> Relation:
    return relate(
        new,
        analyse(old.content),
        similarity=old.similarity,
        categories=(incoming.category, old.category),
        dup_threshold=dup,
        embed=embed,
        to_reference=to_reference,
    )


def _contradiction(
    incoming: Candidate,
    existing: Sequence[Existing],
    relations: Sequence[Relation],
    found: Sequence[int],
    strategy: Strategy,
) -> Resolution:
    pinned = [existing[i].id for i in found if existing[i].pinned]
    if pinned:
        return Resolution("reject", tuple(pinned), None, "pinned rule; chat cannot override", True)
    chosen = decisive(relations)
    if not chosen:
        ids = tuple(existing[i].id for i in found)
        return Resolution("mark_conflict", ids, None, "ambiguous: several slots fit", True)
    targets = [existing[i] for i in chosen]
    ids = tuple(t.id for t in targets)
    why = relations[chosen[0]].why
    if strategy == "mark_conflict":
        return Resolution("mark_conflict", ids, None, f"{why}; kept both", True)
    if strategy == "merge":
        merged = f"{targets[0].content.rstrip(' .。')}; {incoming.content}"
        return Resolution("merge", ids, merged, f"{why}; merged", True)
    newer = all(incoming.created_at >= t.created_at for t in targets)
    if strategy == "last_write_wins":
        action: Action = "supersede" if newer else "reject"
        return Resolution(action, ids, None, f"{why}; last write wins", True)
    return _policy(incoming, targets, ids, why, newer)


def _policy(
    incoming: Candidate, targets: Sequence[Existing], ids: tuple[str, ...], why: str, newer: bool
) -> Resolution:
    """Explicit > learned > inferred; among equals, the newer statement wins."""
    rank = _ORIGIN_RANK[incoming.origin]
    top = max(_ORIGIN_RANK[t.origin] for t in targets)
    if rank < top:
        return Resolution("reject", ids, None, f"{why}; an inference never overrides", True)
    if rank > top:
        return Resolution("supersede", ids, None, f"{why}; explicit beats inferred", True)
    if not newer:
        return Resolution("mark_conflict", ids, None, f"{why}; older than the memory", True)
    return Resolution("supersede", ids, None, f"{why}; newer statement wins", True)


def _merge_into(target: Existing, new: Frame) -> Resolution:
    if target.pinned:
        return Resolution("reject", (target.id,), None, "pinned list; chat cannot change it")
    merged = merge_text(target.content, new, analyse(target.content).values)
    return Resolution("merge", (target.id,), merged, "adds to a list-like memory")
