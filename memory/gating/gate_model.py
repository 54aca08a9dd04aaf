"""The model-based gate: structured output, validated, retried once, rules as the fallback.

Local models break JSON, and a memory whose verdict cannot be parsed is lost silently. Here the
answer is parsed from the message text (any chat model works, with or without native structured
output), validated with pydantic, retried once with the validation error, and on a second
failure or any exception the rule gate decides and a warning is logged. Redaction runs before
the text reaches the model, and the poisoning rules apply to the model's answer as to the
rules'.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from memory.gating.decision import GateDecision, GatePolicy, Role
from memory.gating.privacy import PrivacyFilter
from memory.gating.rules.decide import DEFAULT_PRIVACY, gate, instruction_decision, kind_for, screen
from memory.gating.rules.turn import needs_approval, trim_small_talk
from memory.model_json import MalformedReply, parse_json_reply, retry_malformed
from memory.types import Category, MemoryKind, Origin
from prompts.gate import GATE_RETRY, GATE_SYSTEM, build_gate_request

if TYPE_CHECKING:
    # LangChain is imported where a model is called: the rules-only gate (the CLI's `remember`,
    # every turn without a gate model) must not pay ~1.5 s to import it.
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage

logger = logging.getLogger(__name__)

MALFORMED = "model answer malformed; rules used"
_RULE_CATEGORIES = frozenset({Category.PREFERENCE, Category.CONSTRAINT})


class GateAnswer(BaseModel):
    """The JSON object the gate prompt asks for."""

    keep: bool
    category: Category
    importance: float = Field(ge=0.0, le=1.0)
    confidence: float = Field(default=0.7, ge=0.0, le=1.0)
    origin: Literal["explicit", "inferred"] = "explicit"
    needs_approval: bool = False
    instruction_like: bool = False
    reason: str = ""


def parse_answer(raw: object) -> tuple[GateAnswer | None, str]:
    """Parse a model reply into a `GateAnswer`, or return the error to send back."""
    return parse_json_reply(raw, GateAnswer)


async def gate_with_model(
    model: BaseChatModel,
    text: str,
    *,
    role: Role = "user",
    policy: GatePolicy | None = None,
    privacy: PrivacyFilter | None = None,
    context: str | None = None,
    reply: str | None = None,
) -> GateDecision:
    """Gate `text` with `model`; falls back to the rule gate, never losing a memory silently.

    `context` (the turn `text` answers) and `reply` (the response it got) go to the model
    redacted, and to the rule fallback.
    """
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    policy = policy or GatePolicy()
    privacy = privacy or DEFAULT_PRIVACY
    content, findings, verdict = screen(text, role, policy, privacy)
    if verdict is not None:
        return verdict
    # Redacted like the message itself: the model provider sees no secret from either side.
    safe_context = privacy.clean(context) if context else None
    safe_reply = privacy.clean(reply[:2000]) if reply else None
    messages: list[BaseMessage] = [
        SystemMessage(GATE_SYSTEM),
        HumanMessage(build_gate_request(content, role, safe_context, safe_reply)),
    ]
    try:
        async for attempt in retry_malformed():
            with attempt:
                try:
                    response = await model.ainvoke(messages)
                except Exception as exc:  # any provider failure falls back to the rules
                    logger.warning(
                        "memory gate model call failed (%s); using the rule gate", type(exc)
                    )
                    why = "model call failed; rules used"
                    return _fallback(text, role, policy, privacy, (context, reply), why)
                answer, error = parse_answer(response)
                if answer is not None:
                    return from_answer(answer, content, findings, role, policy)
                number = attempt.retry_state.attempt_number
                logger.warning("memory gate model answer malformed (attempt %d): %s", number, error)
                retry = HumanMessage(GATE_RETRY.format(error=error))
                messages += [AIMessage(response.text), retry]
                raise MalformedReply(error)
    except MalformedReply:
        pass
    return _fallback(text, role, policy, privacy, (context, reply), MALFORMED)


def _fallback(
    text: str,
    role: Role,
    policy: GatePolicy,
    privacy: PrivacyFilter,
    exchange: tuple[str | None, str | None],
    why: str,
) -> GateDecision:
    context, reply = exchange
    decision = gate(text, role=role, policy=policy, privacy=privacy, context=context, reply=reply)
    return replace(decision, reason=f"{why}: {decision.reason}")


def from_answer(
    answer: GateAnswer, content: str, findings: tuple[str, ...], role: Role, policy: GatePolicy
) -> GateDecision:
    """Apply the trust rules to a valid model answer: the model cannot promote tool text."""
    if answer.instruction_like and role != "system":
        return instruction_decision(content, findings, role, policy)
    category = answer.category
    low_trust = role == "tool"
    if role in ("tool", "assistant") and category in _RULE_CATEGORIES:
        category = Category.FACT  # what the tool or agent said, not what the user wants
    keep = answer.keep and category is not Category.NOISE
    keep = keep and answer.importance >= policy.model_keep_threshold
    importance = answer.importance
    if low_trust:
        importance = min(importance, policy.low_trust_max_importance)
    inferred = answer.origin == "inferred" or role in ("tool", "assistant")
    kind = kind_for(category, role)
    if inferred and kind is MemoryKind.PREFERENCE:
        kind = MemoryKind.EPISODIC  # an inference stays episodic until consolidation confirms it
    return GateDecision(
        keep=keep,
        category=category,
        kind=kind,
        importance=round(importance, 3),
        confidence=round(answer.confidence, 3),
        origin=Origin.INFERRED if inferred else Origin.EXPLICIT,
        reason=f"model: {answer.reason or category.value}" + ("" if keep else "; dropped"),
        content=trim_small_talk(content) if keep else content,
        trust="low" if low_trust else "normal",
        needs_approval=keep
        and not low_trust
        and (answer.needs_approval or needs_approval(content)),
        ttl_days=policy.ttl_for(category, low_trust=low_trust) if keep else None,
        findings=findings,
    )
