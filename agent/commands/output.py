"""Printing helpers shared by the CLI commands.

Stored text is a user's (a chat turn, an MCP `remember`, a store put), and the operator reads
it in a terminal, which acts on control sequences: ESC and C1 controls rewrite or hide lines,
set the window title or, where OSC 52 is honoured, the clipboard. Human-readable output goes
through `say`, which shows every control character but newline and tab as a visible escape;
JSON output escapes them as JSON does.
"""

from __future__ import annotations

import json
import re
from typing import IO, Any

from memory.types import MemoryRecord, ScoredMemory

# C0 controls but tab and newline (ESC among them), DEL, and the C1 controls (CSI, OSC, ...).
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# What JSON leaves raw: DEL and C1 (it escapes C0 itself).
_JSON_RAW = re.compile(r"[\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """`text` with each control character but newline and tab shown as a visible hex escape."""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def say(
    *values: object, sep: str = " ", end: str = "\n", file: IO[str] | None = None,
    flush: bool = False,
) -> None:  # fmt: skip
    """`print` for human-readable CLI output: what it prints is `terminal_safe`."""
    text = terminal_safe(sep.join(str(v) for v in values))
    print(text, end=end, file=file, flush=flush)


def print_json(value: Any) -> None:
    """Print JSON (UTF-8, dates as ISO strings, DEL and C1 controls escaped too)."""
    text = json.dumps(value, ensure_ascii=False, indent=2, default=str)
    print(_JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text))


def scored_to_dict(hit: ScoredMemory) -> dict[str, Any]:
    """A recalled memory as JSON: the record's key fields and its score breakdown."""
    r = hit.record
    return {
        "id": r.id,
        "kind": r.kind.value,
        "category": r.category.value,
        "content": r.content,
        "occurred_at": r.occurred_at.isoformat(),
        "importance": r.importance,
        "confidence": r.confidence,
        "access_count": r.access_count,
        "score": hit.score,
        "breakdown": hit.breakdown.as_dict(),
        "relevance": rel.as_dict() if (rel := hit.breakdown.relevance) else None,
        "question": hit.breakdown.question,
        **({"image": r.provenance["image"]} if image_features(r) else {}),
    }


def image_features(record: MemoryRecord) -> dict[str, Any] | None:
    """The image features of an image memory (None for other memories)."""
    image = record.provenance.get("image")
    return image if isinstance(image, dict) else None


def image_line(record: MemoryRecord) -> str | None:
    """One line about an image memory's image: format, size, hash, capture time, describer."""
    f = image_features(record)
    if f is None:
        return None
    parts = [
        f"{f.get('format', '?')} {f.get('width', '?')}x{f.get('height', '?')}",
        f"{int(f.get('bytes') or 0):,} bytes",
        f"phash {f.get('phash', '?')}",
    ]
    if f.get("captured_at"):
        parts.append(f"captured {f['captured_at']}")
    if f.get("name"):
        parts.append(f"file {f['name']}")
    parts.append(f"described by {record.provenance.get('description_source', '?')}")
    return "image: " + ", ".join(parts)
