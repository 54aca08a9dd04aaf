"""The gate model reads whether a new statement replaces what the user said before.

Updates are rarely announced ("Started at Bosch in January" after "I work at Siemens"); the
rules read them by patterns and the attribute reader, which miss many a model reads at once.
With a gate model configured, the write path asks it which of the statement's nearest earlier
memories it replaces and which it agrees with (`conflicts.resolve_by_reading` turns the answer
into the policy's verdict). The answer is validated (numbers of listed memories only, none in
both lists), retried once with the error, and on a second failure, a timeout or any exception
the rules' verdict stands and the audit reason says so.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, field_validator

from memory.gating.gate_model import rules_used
from memory.model_json import ask_json, parse_json_reply
from prompts.updates import UPDATE_RETRY, UPDATE_SYSTEM, build_update_request

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage

logger = logging.getLogger(__name__)

# The write path shows the model this many neighbours at most (`ingest.apply.NEIGHBOURS` is 6);
# a longer list in the answer is malformed.
MAX_EARLIER = 16
# An earlier memory is shown cut to this many characters: the attribute it sets is in its
# opening, and a long memory must not make the call slow or costly.
EARLIER_CHARS = 600


def _numbers(value: Any) -> Any:
    """Booleans are not numbers here, though pydantic would read `true` as 1."""
    if isinstance(value, list) and any(isinstance(v, bool) for v in value):
        raise ValueError("numbers only")
    return value


class UpdateAnswer(BaseModel):
    """The JSON object the update prompt asks for (numbers from 1)."""

    replaces: list[int] = Field(default_factory=list, max_length=MAX_EARLIER)
    agrees: list[int] = Field(default_factory=list, max_length=MAX_EARLIER)

    _only_numbers = field_validator("replaces", "agrees", mode="before")(_numbers)


@dataclass(frozen=True, slots=True)
class UpdateReading:
    """What the model read, as indexes into the earlier memories; `failed` says why not."""

    replaces: frozenset[int] = frozenset()
    agrees: frozenset[int] = frozenset()
    failed: str = ""


@dataclass(frozen=True, slots=True)
class UpdateReader:
    """The gate model, asked on the write path what a statement replaces (`read_updates`)."""

    model: BaseChatModel
    timeout_s: float = 30.0

    async def read(self, statement: str, earlier: Sequence[str]) -> UpdateReading:
        """What `statement` replaces among `earlier`, or a reading that says why not."""
        return await read_updates(self.model, statement, earlier, timeout_s=self.timeout_s)


def checked(answer: UpdateAnswer, count: int) -> tuple[UpdateReading | None, str]:
    """The reading of a parsed answer over `count` earlier memories, or the error to send back."""
    for key, numbers in (("replaces", answer.replaces), ("agrees", answer.agrees)):
        for number in numbers:
            if not 1 <= number <= count:
                return None, f"{key} names {number}, not one of 1-{count}"
    both = set(answer.replaces) & set(answer.agrees)
    if both:
        return None, f"{min(both)} is in both lists"
    replaces = frozenset(n - 1 for n in answer.replaces)
    return UpdateReading(replaces, frozenset(n - 1 for n in answer.agrees)), ""


async def read_updates(
    model: BaseChatModel, statement: str, earlier: Sequence[str], *, timeout_s: float
) -> UpdateReading:
    """Ask `model` which of `earlier` the (redacted) `statement` replaces or agrees with."""
    from langchain_core.messages import HumanMessage, SystemMessage

    if not earlier:
        return UpdateReading()
    shown = [text[:EARLIER_CHARS] for text in earlier[:MAX_EARLIER]]
    messages: list[BaseMessage] = [
        SystemMessage(UPDATE_SYSTEM),
        HumanMessage(build_update_request(statement, shown)),
    ]

    def read(reply: BaseMessage) -> tuple[UpdateReading | None, str]:
        answer, error = parse_json_reply(reply, UpdateAnswer)
        return checked(answer, len(shown)) if answer is not None else (None, error)

    asked = await ask_json(model, messages, read, retry=UPDATE_RETRY, what="update model",
                           fallback="rules decide", log=logger, timeout_s=timeout_s)  # fmt: skip
    if asked.value is not None:
        return asked.value
    return UpdateReading(failed=rules_used(asked.why))
