"""The prompt's sections as lines with a packing priority (used by `memory.working.composer`).

A section is a header plus lines in *display* order, and a packing order over those lines
(most important first). Memory text is flattened to one line and cited, so a stored memory can
neither fake a section header nor pass as a bare fact.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, NotRequired

from typing_extensions import TypedDict

from memory.citations import neutralise
from memory.working.context_rules import KIND_ORDER
from memory.working.scratchpad import ScratchpadEntry, scratchpad_lines
from memory.working.task_state import TaskState, task_state_lines
from memory.working.tokens import truncate_to_tokens
from memory.working.working_types import SummaryItem
from prompts import agent as text

# One recalled snippet, preference or note is a few sentences: cap each line at ~150 words.
MAX_SNIPPET_TOKENS = 200


class PrefItem(TypedDict):
    """A long-term preference from the structured profile."""

    key: str
    value: str
    confidence: NotRequired[float]


class EvidenceItem(TypedDict):
    """A recalled memory to inject as a cited snippet."""

    id: str
    date: str  # ISO date or datetime; the first 10 characters are shown
    kind: str  # episodic / semantic / procedural / preference
    content: str
    score: float


class Section(NamedTuple):
    """Header, lines in display order, and a packing key per line (lowest packs first).

    Keys are comparable across the sections of one priority tier (summary and decisions share
    one: (kind rank, -message index)).
    """

    name: str
    header: str
    lines: list[str]
    keys: Sequence[tuple[int, ...]]
    ids: list[str]  # per line: the memory id it cites ('' when none)


def _plain(name: str, header: str, lines: list[str]) -> Section:
    """A section packed in display order."""
    return Section(name, header, lines, [(i,) for i in range(len(lines))], [""] * len(lines))


def _flat(value: str) -> str:
    # A citation look-alike inside a memory ("[MEM:…", "［mem：…") would let it forge one, and
    # newlines would let it forge headers: only the composer's own lines carry "[mem:".
    flat = neutralise(" ".join(value.split()))
    return truncate_to_tokens(flat, MAX_SNIPPET_TOKENS)


def short_id(memory_id: str) -> str:
    """The 8-character id shown in citations (uuid hyphens dropped)."""
    return memory_id.replace("-", "")[:8]


def preferences_section(prefs: Sequence[PrefItem]) -> Section:
    """Preferences in the caller's order (the caller ranks them)."""
    lines = [
        text.PREFERENCE_LINE.format(key=_flat(p["key"]), value=_flat(p["value"])) for p in prefs
    ]
    return _plain("preferences", text.PREFERENCES_HEADER, lines)


def task_section(state: TaskState | None) -> Section:
    """Goal, constraints, step, next action, last error, attempts: already in priority order."""
    lines = [_flat(line) for line in task_state_lines(state)] if state is not None else []
    return _plain("task_state", text.TASK_STATE_HEADER, lines)


def scratchpad_section(pad: Sequence[ScratchpadEntry]) -> Section:
    """Notes shown oldest first, packed newest first."""
    lines = [_flat(line) for line in scratchpad_lines(pad)]
    keys = [(-i,) for i in range(len(lines))]
    return Section("scratchpad", text.SCRATCHPAD_HEADER, lines, keys, [""] * len(lines))


def evidence_section(evidence: Sequence[EvidenceItem]) -> Section:
    """Cited snippets, best score first (shown and packed in that order)."""
    ranked = sorted(evidence, key=lambda e: e["score"], reverse=True)
    lines = [
        text.EVIDENCE_LINE.format(
            id=short_id(e["id"]),
            date=e["date"][:10] or "undated",
            kind=_flat(e["kind"]),
            content=_flat(e["content"]),
        )
        for e in ranked
    ]
    keys = [(i,) for i in range(len(lines))]
    return Section("evidence", text.EVIDENCE_HEADER, lines, keys, [e["id"] for e in ranked])


def items_section(name: str, header: str, items: Sequence[SummaryItem]) -> Section:
    """Summary items shown in time order, packed constraints first then newest first."""
    shown = sorted(items, key=lambda it: it["index"])
    lines = [text.SUMMARY_LINE.format(kind=it["kind"], text=_flat(it["text"])) for it in shown]
    keys = [(KIND_ORDER.index(it["kind"]), -it["index"]) for it in shown]
    return Section(name, header, lines, keys, [""] * len(lines))
