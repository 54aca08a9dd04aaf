"""Model-based distillation: structured output, validated, retried once, rules as the fallback.

The model words the rule and judges whether the episodes really agree; the rules still decide
eligibility and confidence (support, days, agreement), so a model can veto a promotion but
never promote a theme the evidence does not carry. A malformed answer is retried once with the
validation error; a second failure, or any provider error, falls back to the rules' verdict and
is logged: local models often break JSON, and a broken answer must not silently drop a memory.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from memory.citations import neutralise
from memory.gating.rules.turn import is_instruction_like
from memory.longterm.consolidation.distil import Distillation
from memory.model_json import ask_json, parse_json_reply
from memory.types import Category, MemoryKind, MemoryRecord
from prompts.consolidation import DISTIL_RETRY, DISTIL_SYSTEM, build_distil_request

log = logging.getLogger(__name__)


class DistilAnswer(BaseModel):
    """The JSON object the distillation prompt asks for."""

    promote: bool
    kind: Literal["preference", "procedural", "semantic"] = "preference"
    category: Category = Category.PREFERENCE
    statement: str = Field(default="", max_length=400)
    reason: str = ""


def parse_distil_answer(raw: object) -> tuple[DistilAnswer | None, str]:
    """Parse a reply into a `DistilAnswer`, or return the error to send back to the model."""
    answer, error = parse_json_reply(raw, DistilAnswer)
    if answer is not None and answer.promote and not answer.statement.strip():
        return None, "promote is true but statement is empty"
    return answer, error


def _apply(answer: DistilAnswer, rules: Distillation) -> Distillation:
    # The model's words become a stored rule: only the composer may put citations in a prompt.
    statement = neutralise(" ".join(answer.statement.split()))
    if answer.promote and is_instruction_like(statement):
        return replace(rules, promote=False, reason="model statement is instruction-like; kept "
                       "episodic", method="model")  # fmt: skip
    promote = answer.promote and rules.promote
    if answer.promote and not rules.promote:
        reason = f"model would promote, but the evidence is too weak: {rules.reason}"
    else:
        reason = f"model: {answer.reason or ('stable theme' if promote else 'not stable')}"
    return replace(
        rules,
        promote=promote,
        reason=reason,
        content=statement or rules.content,
        kind=MemoryKind(answer.kind),
        category=answer.category,
        method="model",
    )


async def distil_with_model(
    model: BaseChatModel, records: Sequence[MemoryRecord], rules: Distillation
) -> Distillation:
    """Ask `model` to word and vet the cluster; fall back to `rules` on failure (logged)."""
    episodes = [(r.occurred_at.date().isoformat(), r.content) for r in records]
    messages: list[BaseMessage] = [
        SystemMessage(DISTIL_SYSTEM),
        HumanMessage(build_distil_request(episodes)),
    ]
    asked = await ask_json(model, messages, parse_distil_answer, retry=DISTIL_RETRY,
                           what="distillation model", fallback="rules used", log=log)  # fmt: skip
    if asked.value is not None:
        return _apply(asked.value, rules)
    return replace(rules, method=f"rules ({asked.why})")
