"""The structured user profile (seed 002 §四.1): derived from long-term preferences, cached.

Language, output format, verbosity, style, report style, code style and language, risk level:
each field comes from the user's strongest active long-term memory that states it (pinned >
explicit > learned > inferred, then confidence, then the newest), with that memory's id as its
source. The profile is stored in `user_settings.profile` and cached per user in this process;
the cache is checked against the user's `scope_versions` counter (one indexed lookup), which
every memory change bumps, so a new or superseded preference shows in the next turn's profile.
Compose injects `profile_rules(profile)` as rules.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from memory.longterm.profile_extract import FIELDS, extract
from memory.storage.rows import RECORD_COLUMNS, record_from_row
from memory.types import MemoryRecord, Origin, Scope

_ORIGIN_RANK = {Origin.EXPLICIT: 2, Origin.LEARNED: 1, Origin.INFERRED: 0}
_CACHE_MAX = 10_000  # users; a profile is ~1 KB
_CACHE: OrderedDict[str, UserProfile] = OrderedDict()

_RULE_TEXT = {
    "language": "Reply in {} unless the user writes in another language.",
    "output_format": "Prefer {} output.",
    "verbosity": "Keep answers {}.",
    "style": "Style: {}.",
    "report_style": "Reports: {}.",
    "code_style": "Code: {}.",
    "code_language": "Use {} for code examples unless asked otherwise.",
    "risk_level": "The user's risk tolerance is {}.",
}


@dataclass(frozen=True, slots=True)
class ProfileField:
    """One profile value and the memory it came from."""

    value: str
    memory_id: str
    confidence: float
    origin: str


@dataclass(frozen=True, slots=True)
class UserProfile:
    """A user's structured preferences, derived at `version` of their memories."""

    fields: dict[str, ProfileField] = field(default_factory=dict)
    version: int = 0

    def as_dict(self) -> dict[str, Any]:
        """JSON form, as stored in `user_settings.profile`."""
        return {
            "fields": {
                k: {"value": f.value, "memory_id": f.memory_id, "confidence": f.confidence,
                    "origin": f.origin}
                for k, f in self.fields.items()
            },
            "derived_version": self.version,
        }  # fmt: skip

    def get(self, name: str) -> str | None:
        """The value of one field, or None."""
        item = self.fields.get(name)
        return item.value if item else None


def _rank(record: MemoryRecord) -> tuple[bool, int, float, float]:
    return (record.pinned, _ORIGIN_RANK[record.origin], record.confidence,
            record.occurred_at.timestamp())  # fmt: skip


def derive_profile(records: list[MemoryRecord], version: int = 0) -> UserProfile:
    """Profile fields from long-term memories; the strongest statement of each field wins."""
    fields: dict[str, ProfileField] = {}
    for record in sorted(records, key=_rank, reverse=True):
        for name, value in extract(record.content).items():
            if name not in fields:
                fields[name] = ProfileField(value, record.id, round(record.confidence, 4),
                                            record.origin.value)  # fmt: skip
    ordered = {name: fields[name] for name in FIELDS if name in fields}
    return UserProfile(ordered, version)


def profile_rules(profile: UserProfile) -> list[str]:
    """The profile as short rules for the prompt composer (long-term preferences section)."""
    return [_RULE_TEXT[name].format(f.value) for name, f in profile.fields.items()]


def invalidate_profile(scope: Scope) -> None:
    """Drop one user's cached profile (the next load re-reads it)."""
    _CACHE.pop(scope.key, None)


async def load_profile(store: Any, scope: Scope, *, version: int | None = None) -> UserProfile:
    """The user's profile: from the cache while their memories are unchanged, else re-derived.

    Pass `version` when the caller has just read the user's version (the agent's recall does),
    to save the lookup.
    """
    if version is None:
        async with store.pool.acquire() as conn:
            version = int(await conn.fetchval(
                "SELECT version FROM scope_versions WHERE tenant_id = $1 AND user_id = $2",
                scope.tenant_id, scope.user_id) or 0)  # fmt: skip
    cached = _CACHE.get(scope.key)
    if cached is not None and cached.version == version:
        _CACHE.move_to_end(scope.key)
        return cached
    return await _derive_and_store(store, scope, version)


async def refresh_profile(store: Any, scope: Scope) -> UserProfile:
    """Re-derive and store the profile now (after consolidation or a preference change)."""
    invalidate_profile(scope)
    return await load_profile(store, scope)


async def _derive_and_store(store: Any, scope: Scope, version: int) -> UserProfile:
    async with store.pool.acquire() as conn:
        rows = await conn.fetch(
            f"SELECT {RECORD_COLUMNS} FROM memories WHERE tenant_id = $1 AND user_id = $2"
            " AND status = 'active' AND kind <> 'episodic'"
            " AND (expires_at IS NULL OR expires_at > now())",
            scope.tenant_id, scope.user_id,
        )  # fmt: skip
        profile = derive_profile([record_from_row(r) for r in rows], version)
        stored = await conn.fetchval(
            "SELECT profile FROM user_settings WHERE tenant_id = $1 AND user_id = $2",
            scope.tenant_id, scope.user_id,
        )  # fmt: skip
        current = json.loads(stored) if isinstance(stored, str) else (stored or {})
        if current.get("fields") != profile.as_dict()["fields"]:
            # `||` keeps keys other components keep in the profile document.
            await conn.execute(
                "INSERT INTO user_settings (tenant_id, user_id, profile) VALUES ($1, $2, $3::jsonb)"
                " ON CONFLICT (tenant_id, user_id) DO UPDATE"
                " SET profile = user_settings.profile || $3::jsonb, updated_at = now()",
                scope.tenant_id, scope.user_id, json.dumps(profile.as_dict()),
            )  # fmt: skip
    _CACHE[scope.key] = profile
    _CACHE.move_to_end(scope.key)
    while len(_CACHE) > _CACHE_MAX:
        _CACHE.popitem(last=False)
    return profile
