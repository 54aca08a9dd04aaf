"""A structural outline of a JSON value: keys, list lengths, item types, sample values.

A 50k-token search result cut blindly loses its shape (how many results, which fields); the
outline keeps the shape in a few hundred tokens.
"""

from __future__ import annotations

import json
from typing import Any

from memory.json_limits import loads_bounded

MAX_KEYS = 25  # keys listed per object
MAX_DEPTH = 4
MAX_LINES = 200
_SAMPLE_CHARS = 60


def _type_name(value: Any) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "list"
    return "null" if value is None else type(value).__name__


def _scalar(value: Any) -> str:
    if isinstance(value, str) and len(value) > _SAMPLE_CHARS:
        return (
            json.dumps(value[:_SAMPLE_CHARS], ensure_ascii=False)[:-1] + f'…" ({len(value)} chars)'
        )
    return json.dumps(value, ensure_ascii=False, default=str)


def _walk(value: Any, label: str, depth: int, out: list[str]) -> None:
    if len(out) >= MAX_LINES:
        return
    pad = "  " * depth
    if isinstance(value, dict):
        out.append(f"{pad}{label}object, {len(value)} keys")
        if depth < MAX_DEPTH:
            for key in list(value)[:MAX_KEYS]:
                _walk(value[key], f"{key}: ", depth + 1, out)
            if len(value) > MAX_KEYS:
                out.append(f"{pad}  … {len(value) - MAX_KEYS} more keys")
    elif isinstance(value, list):
        kinds = sorted({_type_name(v) for v in value[:100]})
        out.append(f"{pad}{label}list of {len(value)} ({', '.join(kinds) or 'empty'})")
        if value and depth < MAX_DEPTH:
            _walk(value[0], "[0]: ", depth + 1, out)
    else:
        out.append(f"{pad}{label}{_scalar(value)}")


def json_outline(value: Any) -> str:
    """The outline of a parsed JSON value, one line per key / list / sample value."""
    out: list[str] = []
    _walk(value, "", 0, out)
    if len(out) >= MAX_LINES:
        out.append("… (outline cut)")
    return "\n".join(out)


def parse_json(text: str) -> Any | None:
    """The parsed value when `text` is a JSON object or array; None otherwise."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        value = loads_bounded(stripped)  # deeper: not outlined, read as text
    except ValueError:
        return None
    return value if isinstance(value, dict | list) else None
