"""Read a JSON object out of a chat model's reply and validate it; retry a malformed one.

Local models wrap JSON in prose or code fences and get fields wrong; `ask_json` asks again
once with the error (`retry_malformed`), and the caller falls back to its rules when the answer
is still unusable, the call times out or the provider fails, so a model that cannot answer in
the schema never loses a memory.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel, ValidationError
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt

from memory.json_limits import JSONDepthError, loads_bounded

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)

Schema = TypeVar("Schema", bound=BaseModel)
Value = TypeVar("Value")

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel


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


@dataclass(frozen=True, slots=True)
class Asked(Generic[Value]):
    """A model's usable answer, or why there is none ("timed out", "call failed", "malformed")."""

    value: Value | None = None
    failed: Literal["", "timed out", "call failed", "malformed"] = ""

    @property
    def why(self) -> str:
        """The failure as an audit reason says it: "model answer malformed", ..."""
        return "model answer malformed" if self.failed == "malformed" else f"model {self.failed}"


async def ask_json(
    model: BaseChatModel,
    messages: list[BaseMessage],
    read: Callable[[BaseMessage], tuple[Value | None, str]],
    *,
    retry: str,
    what: str,
    fallback: str,
    log: logging.Logger,
    timeout_s: float | None = None,
    echo_chars: int | None = None,
) -> Asked[Value]:
    """Ask `model`, read its reply with `read` (the value, or None and the error), retry once.

    A malformed reply is sent back with `retry` (a template with `{error}`), the bad answer
    echoed first (cut to `echo_chars`); each attempt gets `timeout_s`. Every failure is logged
    as "`what` ...; `fallback`" on `log`, so each caller's log names it.
    """
    try:
        async for attempt in retry_malformed():
            with attempt:
                try:
                    reply = await asyncio.wait_for(model.ainvoke(messages), timeout=timeout_s)
                except TimeoutError:
                    log.warning("%s took over %.0f s; %s", what, timeout_s or 0, fallback)
                    return Asked(failed="timed out")
                except Exception as exc:  # any provider failure: the caller's fallback decides
                    log.warning("%s call failed (%s); %s", what, type(exc).__name__, fallback)
                    return Asked(failed="call failed")
                value, error = read(reply)
                if value is not None:
                    return Asked(value)
                number = attempt.retry_state.attempt_number
                log.warning("%s malformed (attempt %d): %s", what, number, error)
                echo = reply.text if echo_chars is None else reply.text[:echo_chars]
                messages += [AIMessage(echo), HumanMessage(retry.format(error=error))]
                raise MalformedReply(error)
    except MalformedReply:
        pass
    return Asked(failed="malformed")


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
