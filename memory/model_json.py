"""Read a JSON object out of a chat model's reply and validate it; retry a malformed one.

Local models wrap JSON in prose or code fences and get fields wrong; the caller retries once
with the error this returns (`retry_malformed`), then falls back to its rules, so a model that
cannot answer in the schema never loses a memory.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from langchain_core.messages import AIMessage, BaseMessage
from pydantic import BaseModel, ValidationError
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt

from memory.json_limits import JSONDepthError, loads_bounded

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)

Schema = TypeVar("Schema", bound=BaseModel)


MODEL_ATTEMPTS = 2
"""A malformed answer is asked for again once, with the error, before the caller falls back."""


class MalformedReply(Exception):
    """A model answer that could not be used; `retry_malformed` asks again."""


def retry_malformed(attempts: int = MODEL_ATTEMPTS) -> AsyncRetrying:
    """Retry the attempt block on `MalformedReply`, at once, then re-raise the last one.

    The caller appends the bad answer and a corrective message to its conversation before
    raising, so the next attempt sees what was wrong. Other exceptions are not retried.
    """
    return AsyncRetrying(
        stop=stop_after_attempt(attempts),
        retry=retry_if_exception_type(MalformedReply),
        reraise=True,
    )


def parse_json_reply(raw: object, schema: type[Schema]) -> tuple[Schema | None, str]:
    """The reply's JSON object validated as `schema`, or None and the error to send back.

    `raw` is the reply message, or its content (a string or a list of content blocks).
    """
    if not isinstance(raw, BaseMessage):
        raw = AIMessage(content=raw if isinstance(raw, str | list) else str(raw))
    text = str(raw.text)
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1)
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None, "no JSON object found"
    try:
        data: Any = loads_bounded(text[start : end + 1])
        return schema.model_validate(data), ""
    except JSONDepthError as exc:
        return None, str(exc)
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON ({exc.msg})"
    except ValidationError as exc:
        fields = ", ".join(".".join(str(p) for p in e["loc"]) or "root" for e in exc.errors())
        return None, f"invalid fields: {fields}"
