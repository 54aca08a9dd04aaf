"""Ask a chat model for decision-state items, and validate what it answers.

A local model's malformed answer must never lose state (local models often break JSON): it is parsed
strictly, the caller retries once, then falls back to the extractive summary.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from memory.working.context_rules import ItemKind, normalise_key
from memory.working.summary_extract import make_item
from memory.working.tokens import content_text, truncate_to_tokens
from memory.working.turns import role_of
from memory.working.working_types import SummaryItem
from prompts.summarize import SUMMARY_SYSTEM, build_summary_request

_KEYS: dict[str, ItemKind] = {
    "constraints": "constraint",
    "decisions": "decision",
    "open_items": "open_item",
    "failures": "failure",
    "facts": "fact",
}
_FENCE = re.compile(r"\A\s*```(?:json)?\s*|(?<!\s)\s*```\s*\Z")
# Per-message cap in the transcript: a 10k-token tool dump must not blow the summary call.
_TRANSCRIPT_MSG_TOKENS = 400


class SummaryAnswerError(ValueError):
    """The model's answer is not the JSON object the summary prompt asks for."""


def render_transcript(messages: Sequence[BaseMessage], start: int) -> str:
    """Numbered `[index] role: text` lines for the prompt (system messages left out)."""
    lines = []
    for offset, msg in enumerate(messages):
        role = role_of(msg)
        if role != "system":
            text = truncate_to_tokens(content_text(msg.content), _TRANSCRIPT_MSG_TOKENS)
            lines.append(f"[{start + offset}] {role}: {text}")
    return "\n".join(lines)


def render_state(items: Sequence[SummaryItem]) -> str:
    """The current state as compact `kind: text` lines."""
    return "\n".join(f"{it['kind']}: {it['text']}" for it in items)


def _entries(value: Any) -> list[tuple[str, Any]]:
    if not isinstance(value, list):
        raise SummaryAnswerError(f"expected a list, got {type(value).__name__}")
    out: list[tuple[str, Any]] = []
    for entry in value:
        if isinstance(entry, str):
            out.append((entry, None))
        elif isinstance(entry, dict) and isinstance(entry.get("text"), str):
            out.append((entry["text"], entry.get("msg")))
        else:
            raise SummaryAnswerError(f"list element is not text: {entry!r:.80}")
    return out


def parse_answer(
    answer: str, messages: Sequence[BaseMessage], start: int
) -> tuple[list[SummaryItem], set[str]]:
    """Items and resolved open-item keys from the model's answer; raises SummaryAnswerError.

    `messages` is the new chunk, starting at history index `start`. An item citing a message
    outside the chunk is attributed to the chunk's last message; a "constraint" that does not
    cite a user message of the chunk is demoted to a fact (only the user sets rules).
    """
    try:
        data = json.loads(_FENCE.sub("", answer))
    except json.JSONDecodeError as exc:
        raise SummaryAnswerError(f"not JSON: {exc}") from exc
    if not isinstance(data, dict) or not (set(data) & {*_KEYS, "resolved"}):
        raise SummaryAnswerError("not an object with the summary keys")
    items: list[SummaryItem] = []
    last = start + len(messages) - 1
    for key, kind in _KEYS.items():
        for text, msg in _entries(data.get(key, [])):
            cited = isinstance(msg, int) and start <= msg <= last
            index = msg if cited else last
            role = role_of(messages[index - start])
            # Only the user sets rules: an uncited "constraint" or one from a tool is a fact.
            rule_ok = cited and role == "user"
            real_kind: ItemKind = "fact" if kind == "constraint" and not rule_ok else kind
            item = make_item(real_kind, text, role, index)
            if item is not None:
                items.append(item)
    resolved = {normalise_key(text) for text, _ in _entries(data.get("resolved", []))}
    return items, resolved


async def ask_model(
    model: BaseChatModel,
    messages: Sequence[BaseMessage],
    start: int,
    previous: Sequence[SummaryItem],
    timeout_s: float,
) -> tuple[list[SummaryItem], set[str]]:
    """One summary call: prompt, wait at most `timeout_s`, parse strictly."""
    request = build_summary_request(render_state(previous), render_transcript(messages, start))
    reply = await asyncio.wait_for(
        model.ainvoke([SystemMessage(SUMMARY_SYSTEM), HumanMessage(request)]), timeout_s
    )
    return parse_answer(reply.text, messages, start)
