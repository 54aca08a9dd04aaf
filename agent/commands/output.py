"""Printing helpers shared by the CLI commands."""

from __future__ import annotations

import json
from typing import Any

from memory.types import MemoryRecord, ScoredMemory


def print_json(value: Any) -> None:
    """Print JSON (UTF-8, dates as ISO strings)."""
    print(json.dumps(value, ensure_ascii=False, indent=2, default=str))


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
