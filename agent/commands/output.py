"""Printing helpers shared by the CLI commands."""

from __future__ import annotations

import json
from typing import Any

from memory.types import ScoredMemory


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
    }
