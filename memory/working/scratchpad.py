"""The scratchpad: the agent's notes for the task in hand.

A list of `{id, category, content, ts}` entries in graph state, capped by entry count (50: room
for a long task's progress notes without a flood) and by tokens (so it cannot crowd out the
prompt). Pure functions: each returns a new list. The model edits it through tools
(`memory.working.scratchpad_tools`); the graph applies the returned operations with `apply_op`.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Literal

from typing_extensions import TypedDict

from memory.working.tokens import count_tokens, truncate_to_tokens

MAX_ENTRIES = 50
# 1,500 tokens: a quarter of a 6k working budget at most, ~30 notes of a sentence or two.
MAX_TOKENS = 1500
# One note is a note, not a document: ~150 words.
MAX_ENTRY_TOKENS = 200
_CATEGORY = re.compile(r"[^a-z0-9_\-]+")


class ScratchpadEntry(TypedDict):
    """One note."""

    id: str
    category: str
    content: str
    ts: str  # ISO 8601, UTC


class ScratchpadOp(TypedDict):
    """An edit the model asked for through a tool; the graph applies it to state."""

    op: Literal["write", "clear"]
    entry: ScratchpadEntry | None
    category: str | None


def clean_category(category: str | None) -> str:
    """A safe category slug (lower case, 32 characters at most); 'general' when empty."""
    slug = _CATEGORY.sub("_", (category or "").strip().lower()).strip("_")[:32]
    return slug or "general"


def make_entry(
    content: str, category: str = "general", *, entry_id: str | None = None, ts: str | None = None
) -> ScratchpadEntry:
    """A new entry, its content trimmed to `MAX_ENTRY_TOKENS`."""
    return ScratchpadEntry(
        id=entry_id or uuid.uuid4().hex[:12],
        category=clean_category(category),
        content=truncate_to_tokens(content.strip(), MAX_ENTRY_TOKENS),
        ts=ts or datetime.now(UTC).isoformat(timespec="seconds"),
    )


def cap(
    pad: Sequence[ScratchpadEntry], max_entries: int = MAX_ENTRIES, max_tokens: int = MAX_TOKENS
) -> list[ScratchpadEntry]:
    """The newest entries within both caps (the oldest are evicted first)."""
    kept: list[ScratchpadEntry] = []
    used = 0
    for entry in reversed(pad):
        cost = count_tokens(entry["content"])
        if len(kept) >= max_entries or used + cost > max_tokens:
            break
        kept.append(entry)
        used += cost
    kept.reverse()
    return kept


def write(
    pad: Sequence[ScratchpadEntry],
    content: str,
    category: str = "general",
    *,
    max_entries: int = MAX_ENTRIES,
    max_tokens: int = MAX_TOKENS,
) -> list[ScratchpadEntry]:
    """`pad` plus a new entry, capped. Empty content leaves the pad unchanged."""
    if not content.strip():
        return list(pad)
    return cap([*pad, make_entry(content, category)], max_entries, max_tokens)


def read(pad: Sequence[ScratchpadEntry], category: str | None = None) -> list[ScratchpadEntry]:
    """All entries, or those of one category."""
    if category is None:
        return list(pad)
    wanted = clean_category(category)
    return [e for e in pad if e["category"] == wanted]


def clear(pad: Sequence[ScratchpadEntry], category: str | None = None) -> list[ScratchpadEntry]:
    """An empty pad, or `pad` without one category."""
    if category is None:
        return []
    wanted = clean_category(category)
    return [e for e in pad if e["category"] != wanted]


def apply_op(
    pad: Sequence[ScratchpadEntry],
    op: ScratchpadOp,
    *,
    max_entries: int = MAX_ENTRIES,
    max_tokens: int = MAX_TOKENS,
) -> list[ScratchpadEntry]:
    """Apply a tool's operation (e.g. a ToolMessage artifact read back from a checkpoint)."""
    if op.get("op") == "clear":
        return clear(pad, op.get("category"))
    entry = op.get("entry")
    if op.get("op") == "write" and entry and isinstance(entry.get("content"), str):
        clean = make_entry(entry["content"], entry.get("category", "general"), ts=entry.get("ts"))
        clean["id"] = str(entry.get("id") or clean["id"])
        return cap([*pad, clean], max_entries, max_tokens)
    raise ValueError(f"not a scratchpad operation: {op!r:.120}")


def scratchpad_lines(pad: Sequence[ScratchpadEntry]) -> list[str]:
    """One `[category] content` line per entry, oldest first."""
    return [f"[{e['category']}] {' '.join(e['content'].split())}" for e in pad]
