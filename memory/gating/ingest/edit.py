"""A person corrects the text of one of their memories, through the same governance as a write.

The new text is screened like any user statement (secrets redacted, high-risk secrets and
instruction-like text refused), then the conflict policy compares it with the user's other
memories: a contradicted memory is superseded by the edited one, a list-like one is merged into
it, a near-duplicate or a losing statement (a pinned business rule wins over chat) refuses the
edit and says which memory is in the way. What passes becomes a new version of the same memory.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from memory.gating.decision import GatePolicy
from memory.gating.ingest.apply import ConflictStrategy, decide, supersede
from memory.gating.privacy import PrivacyFilter
from memory.gating.rules.decide import screen
from memory.settings import ServiceLimits
from memory.storage.edits import replace_content
from memory.storage.quotas import over_quota, usage
from memory.storage.store import MAX_CONTENT_CHARS, MemoryStore
from memory.storage.user_locks import user_write_lock
from memory.types import MemoryRecord, NewMemory, Origin, Scope, Status

EDITABLE = (Status.ACTIVE, Status.PENDING_APPROVAL)


class EditRefused(ValueError):
    """The edit was not applied; `status` is the HTTP status that fits (400, 409, 429 quota)."""

    def __init__(self, message: str, status: int = 400, related: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.status = status
        self.related = related


@dataclass(frozen=True, slots=True)
class EditResult:
    """The memory after the edit, what the gate redacted, and what the conflict policy did."""

    record: MemoryRecord
    redacted: tuple[str, ...]
    action: str  # edited / unchanged / superseded / merged / conflict
    reason: str
    related_ids: tuple[str, ...] = ()


async def edit_memory(
    store: MemoryStore,
    scope: Scope,
    memory_id: str,
    text: str,
    *,
    policy: GatePolicy | None = None,
    privacy: PrivacyFilter | None = None,
    strategy: ConflictStrategy = "policy",
) -> EditResult | None:
    """Apply a person's new text to `memory_id`; None when it is not theirs or does not exist."""
    if not isinstance(text, str) or not text.strip():
        raise EditRefused("the new text must be non-empty")
    if len(text) > MAX_CONTENT_CHARS:
        raise EditRefused(f"the new text is longer than {MAX_CONTENT_CHARS:,} characters")
    if "\x00" in text:
        raise EditRefused("the new text contains NUL characters")
    # Up to 20,000 characters through every redaction pattern: off the event loop.
    content, findings, verdict = await asyncio.to_thread(
        screen, text, "user", policy or GatePolicy(), privacy or PrivacyFilter()
    )
    if verdict is not None:
        # Refused outright (a high-risk secret) or only fit for a low-trust episode (text that
        # tries to instruct the system): neither may replace what the person's memory says.
        raise EditRefused(f"not stored: {verdict.reason}")
    if not content:
        raise EditRefused("nothing is left of the new text after redaction")
    async with user_write_lock(store.pool, scope):
        current = await store.get(scope, memory_id)
        if current is None:
            return None
        if current.status not in EDITABLE:
            raise EditRefused(
                f"this memory is {current.status.value}; only active or pending memories can be"
                " edited (edit the memory that replaced it)",
                status=409,
            )
        if content == current.content:
            return EditResult(current, findings, "unchanged", "the text is the same")
        return await _apply(store, scope, current, content, findings, strategy)


async def _apply(
    store: MemoryStore,
    scope: Scope,
    current: MemoryRecord,
    content: str,
    findings: tuple[str, ...],
    strategy: ConflictStrategy,
) -> EditResult:
    item = NewMemory(
        content=content, kind=current.kind, category=current.category, origin=Origin.EXPLICIT
    )
    verdict = await decide(store, scope, item, strategy, exclude=current.id)
    targets = verdict.target_ids
    if verdict.action == "update_existing":
        raise EditRefused(
            f"the new text repeats memory {targets[0]}: {verdict.reason}", 409, targets
        )
    if verdict.action == "reject":
        raise EditRefused(
            f"the conflict policy kept another memory: {verdict.reason}", 409, targets
        )
    if verdict.action == "merge" and verdict.merged_content:
        content = verdict.merged_content
    full = await _over_byte_quota(store, scope, current, content)
    if full is not None:
        raise EditRefused(f"{full} (MEMORY_QUOTA_BYTES); delete memories to store more", 429)
    tags = sorted({*current.tags, *(["pii-redacted"] if findings else [])})
    if verdict.action == "mark_conflict":
        tags = sorted({*tags, "conflict"})
    why = "edited by the user" + (f"; {verdict.reason}" if verdict.action != "insert" else "")
    detail = {"redacted": list(findings), "conflict_action": verdict.action}
    record = await replace_content(
        store, scope, current.id, content, reason=why, tags=tags, detail=detail
    )
    if record is None:  # deleted while we decided
        raise EditRefused("the memory was deleted meanwhile", 409)
    if verdict.action in ("supersede", "merge"):
        await supersede(store, scope, targets, record.id, why, merged=verdict.action == "merge")
    else:
        for target in targets:
            await store.record_event(scope, target, "conflict", why, {"with": record.id})
    action = {"insert": "edited", "supersede": "superseded", "merge": "merged"}.get(
        verdict.action, "conflict"
    )
    return EditResult(record, findings, action, why, targets)


async def _over_byte_quota(
    store: MemoryStore, scope: Scope, current: MemoryRecord, content: str
) -> str | None:
    """Why the edit would take the user past `MEMORY_QUOTA_BYTES`, else None.

    An edit keeps the count of memories but not their size: without this, a user at the quota
    could grow each small memory to `MAX_CONTENT_CHARS`. Only growth counts, so a user over the
    quota may always shorten a memory. Called under the user's write lock, like the writes'
    check (`memory.gating.ingest.apply`), so two edits cannot both take the last bytes.
    """
    limits = ServiceLimits.from_env()
    growth = len(content.encode("utf-8", "replace")) - len(
        current.content.encode("utf-8", "replace")
    )
    if not limits.serves_users() or limits.max_bytes is None or growth <= 0:
        return None
    return over_quota(await usage(store.pool, scope), None, limits.max_bytes, growth)


__all__ = ["EditRefused", "EditResult", "edit_memory"]
