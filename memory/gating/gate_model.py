"""The model-based gate: structured output, validated, retried once, rules as the fallback.

Local models break JSON, and a memory whose verdict cannot be parsed is lost silently. Here the
answer is parsed from the message text (any chat model works, with or without native structured
output), validated with pydantic, retried once with the validation error, and on a second
failure, a timeout or any exception the rule gate decides, a warning is logged and the reason
("...; rules used") goes to the audit log with the decision. Redaction runs before the text
reaches the model, and the poisoning rules apply to the model's answer as to the rules'.

The model may name the memories in the message (`memories`, at most MAX_MODEL_MEMORIES): each
must quote the message, since a memory the user never wrote is an invented fact, and its kind
must be one of the gate's categories (a few common synonyms are mapped). An answer that breaks
either rule is malformed. The rules' reading of meaning holds over the model's: a question or a
request is not stored, whatever the model says, and only the part of a turn that tells is kept.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, field_validator

from memory.gating.decision import GateDecision, GatePolicy, Role
from memory.gating.privacy import PrivacyFilter
from memory.gating.rules.decide import (
    DEFAULT_PRIVACY,
    gate,
    instruction_decision,
    kept_text,
    kind_for,
    screen,
)
from memory.gating.rules.meaning import told
from memory.gating.rules.turn import needs_approval
from memory.model_json import Asked, ask_json, parse_json_reply
from memory.types import Category, MemoryKind, Origin
from prompts.gate import GATE_RETRY, GATE_SYSTEM, MAX_MODEL_MEMORIES, build_gate_request

__all__ = [
    "ASKED",
    "FAILED",
    "MALFORMED",
    "MAX_MODEL_MEMORIES",
    "TIMED_OUT",
    "GateAnswer",
    "ModelMemory",
    "from_answer",
    "from_answer_all",
    "gate_all_with_model",
    "gate_with_model",
    "parse_answer",
    "quote_of",
    "unquoted",
]

if TYPE_CHECKING:
    # LangChain is imported where a model is called: the rules-only gate (the CLI's `remember`,
    # every turn without a gate model) must not pay ~1.5 s to import it.
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage

logger = logging.getLogger(__name__)


def rules_used(why: str) -> str:
    """The audit reason when a model could not decide: "model timed out; rules used"."""
    return f"{why}; rules used"


MALFORMED = rules_used(Asked(failed="malformed").why)
TIMED_OUT = rules_used(Asked(failed="timed out").why)
FAILED = rules_used(Asked(failed="call failed").why)
ASKED = "a question or request, not a fact"
_RULE_CATEGORIES = frozenset({Category.PREFERENCE, Category.CONSTRAINT})
# Names models give the gate's kinds; anything else is refused as malformed.
_KIND_SYNONYMS = {
    "personal_fact": Category.FACT,
    "profile": Category.FACT,
    "identity": Category.FACT,
    "name": Category.FACT,
    "event": Category.FACT,
    "schedule": Category.FACT,
    "plan": Category.FACT,
    "relationship": Category.FACT,
    "rule": Category.CONSTRAINT,
    "restriction": Category.CONSTRAINT,
    "allergy": Category.CONSTRAINT,
    "like": Category.PREFERENCE,
    "preferences": Category.PREFERENCE,
    "choice": Category.DECISION,
    "lesson": Category.FAILURE_LESSON,
    "failure": Category.FAILURE_LESSON,
    "question": Category.NOISE,
    "request": Category.NOISE,
    "chitchat": Category.NOISE,
    "small_talk": Category.NOISE,
    "greeting": Category.NOISE,
    "none": Category.NOISE,
}
_SPACE = re.compile(r"\s+")


def _category(value: Any) -> Any:
    """A category name as the model wrote it, mapped onto the gate's (unknown ones unchanged)."""
    if not isinstance(value, str):
        return value
    name = value.strip().lower().replace("-", "_").replace(" ", "_")
    return _KIND_SYNONYMS.get(name, name)


class ModelMemory(BaseModel):
    """One memory the model found in the message: a quote of it, and its kind."""

    text: str = Field(min_length=1, max_length=2000)
    category: Category
    importance: float = Field(ge=0.0, le=1.0)
    confidence: float = Field(default=0.7, ge=0.0, le=1.0)

    _kind = field_validator("category", mode="before")(_category)


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
    # One message states a handful of things at most; a longer list is refused as malformed.
    memories: list[ModelMemory] = Field(default_factory=list, max_length=MAX_MODEL_MEMORIES)

    _kind = field_validator("category", mode="before")(_category)


def quote_of(text: str, content: str) -> str | None:
    """The part of `content` that `text` quotes, as the message spells it, or None.

    Whitespace and case may differ, and the closing punctuation; a word may not. What is
    stored is cut from the message, so a model cannot reword a memory into a new fact.
    """
    quote, _ = _folded(text.strip().rstrip(".。!！"))
    if not quote.strip():
        return None
    folded, where = _folded(content)
    # str.find is linear in the message and the quote: no pattern runs on the model's text.
    at = folded.find(quote)
    if at < 0:
        return None
    return content[where[at] : where[at + len(quote) - 1] + 1]


def _folded(text: str) -> tuple[str, list[int]]:
    """`text` lower-cased with whitespace runs as one space, and each character's source index."""
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        if ch.isspace():
            if out and out[-1] == " ":
                continue
            ch = " "
        for low in ch.lower():
            out.append(low)
            where.append(i)
    return "".join(out), where


def unquoted(answer: GateAnswer, content: str) -> str:
    """The error for an answer whose memories do not quote `content`, or "" when all do."""
    for i, memory in enumerate(answer.memories):
        if quote_of(memory.text, content) is None:
            return f"memories.{i}.text is not quoted from the message"
    return ""


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
    redacted, and to the rule fallback. When the model names several memories, the first
    kept one is returned (`gate_all_with_model` returns them all).
    """
    decisions = await gate_all_with_model(
        model, text, role=role, policy=policy, privacy=privacy, context=context, reply=reply
    )
    return next((d for d in decisions if d.keep), decisions[0])


async def gate_all_with_model(
    model: BaseChatModel,
    text: str,
    *,
    role: Role = "user",
    policy: GatePolicy | None = None,
    privacy: PrivacyFilter | None = None,
    context: str | None = None,
    reply: str | None = None,
) -> list[GateDecision]:
    """Every memory the model finds in `text` (at most MAX_MODEL_MEMORIES), or one decision."""
    from langchain_core.messages import HumanMessage, SystemMessage

    policy = policy or GatePolicy()
    privacy = privacy or DEFAULT_PRIVACY
    content, findings, verdict = screen(text, role, policy, privacy)
    if verdict is not None:
        return [verdict]
    exchange = (context, reply)
    # Redacted like the message itself: the model provider sees no secret from either side.
    safe_context = privacy.clean(context) if context else None
    safe_reply = privacy.clean(reply[:2000]) if reply else None
    messages: list[BaseMessage] = [
        SystemMessage(GATE_SYSTEM),
        HumanMessage(build_gate_request(content, role, safe_context, safe_reply)),
    ]

    def read(message: BaseMessage) -> tuple[GateAnswer | None, str]:
        answer, error = parse_answer(message)
        if answer is not None:
            error = unquoted(answer, content)
        return (answer, "") if answer is not None and not error else (None, error)

    asked = await ask_json(model, messages, read, retry=GATE_RETRY, what="memory gate model",
                           fallback="using the rule gate", log=logger,
                           timeout_s=policy.model_timeout_s)  # fmt: skip
    if asked.value is not None:
        return from_answer_all(asked.value, content, findings, role, policy)
    return [_fallback(text, role, policy, privacy, exchange, rules_used(asked.why))]


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


def from_answer_all(
    answer: GateAnswer, content: str, findings: tuple[str, ...], role: Role, policy: GatePolicy
) -> list[GateDecision]:
    """The decisions for a valid answer: one per memory it names, or one for the message.

    Each memory is judged as the message would be (trust rules, keep bar, meaning), on the
    part of the message it quotes; a memory quoted twice is stored once.
    """
    if not answer.memories or answer.instruction_like or not answer.keep:
        return [from_answer(answer, content, findings, role, policy)]
    decisions: list[GateDecision] = []
    seen: set[str] = set()
    for memory in answer.memories:
        quote = quote_of(memory.text, content) or ""
        if quote.casefold() in seen:
            continue
        seen.add(quote.casefold())
        single = answer.model_copy(
            update={
                "category": memory.category,
                "importance": memory.importance,
                "confidence": memory.confidence,
                "memories": [],
            }
        )
        decisions.append(from_answer(single, quote, findings, role, policy))
    return decisions


def from_answer(
    answer: GateAnswer, content: str, findings: tuple[str, ...], role: Role, policy: GatePolicy
) -> GateDecision:
    """Apply the trust rules to a valid model answer: the model cannot promote tool text.

    Nor can it store a question or a request as a fact: a user turn that only asks is dropped,
    and a kept one stores what it tells ("I'm allergic to peanuts", not "what snacks are safe").
    """
    if answer.instruction_like and role != "system":
        return instruction_decision(content, findings, role, policy)
    category = answer.category
    low_trust = role == "tool"
    if role in ("tool", "assistant") and category in _RULE_CATEGORIES:
        category = Category.FACT  # what the tool or agent said, not what the user wants
    keep = answer.keep and category is not Category.NOISE
    keep = keep and answer.importance >= policy.model_keep_threshold
    asked = keep and role == "user" and not told(content)
    keep = keep and not asked
    importance = answer.importance
    if low_trust:
        importance = min(importance, policy.low_trust_max_importance)
    inferred = answer.origin == "inferred" or role in ("tool", "assistant")
    kind = kind_for(category, role)
    if inferred and kind is MemoryKind.PREFERENCE:
        kind = MemoryKind.EPISODIC  # an inference stays episodic until consolidation confirms it
    reason = f"model: {answer.reason or category.value}"
    reason += f"; {ASKED}; dropped" if asked else ("" if keep else "; dropped")
    return GateDecision(
        keep=keep,
        category=category,
        kind=kind,
        importance=round(importance, 3),
        confidence=round(answer.confidence, 3),
        origin=Origin.INFERRED if inferred else Origin.EXPLICIT,
        reason=reason,
        content=kept_text(content, role) if keep else content,
        trust="low" if low_trust else "normal",
        needs_approval=keep
        and not low_trust
        and (answer.needs_approval or needs_approval(content)),
        ttl_days=policy.ttl_for(category, low_trust=low_trust) if keep else None,
        findings=findings,
    )
