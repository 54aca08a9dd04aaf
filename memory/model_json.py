"""Read a JSON object out of a chat model's reply and validate it (gate and consolidation).

Local models wrap JSON in prose or code fences and get fields wrong; the caller retries once
with the error this returns, then falls back to its rules (DESIGN §7: never lose a memory).
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)

Schema = TypeVar("Schema", bound=BaseModel)


def message_text(raw: object) -> str:
    """A reply's text, whether a string or a list of content blocks."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, list):  # content blocks
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in raw)
    return str(raw)


def parse_json_reply(raw: object, schema: type[Schema]) -> tuple[Schema | None, str]:
    """The reply's JSON object validated as `schema`, or None and the error to send back."""
    text = message_text(raw)
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1)
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None, "no JSON object found"
    try:
        data: Any = json.loads(text[start : end + 1])
        return schema.model_validate(data), ""
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON ({exc.msg})"
    except ValidationError as exc:
        fields = ", ".join(".".join(str(p) for p in e["loc"]) or "root" for e in exc.errors())
        return None, f"invalid fields: {fields}"
