"""The rolling conversation summary, refreshed OFF the hot path so no answer waits for it.

The graph calls `refresh_summary` after the reply has been sent; the next turn composes with
the newest *finished* summary, which records how much of the history it covers
(`covers_upto`). Each refresh only reads the messages added since the previous one, so its cost
is one turn's worth whatever the thread length.

Two ways to summarise, one item format (decision state: constraints, decisions, open items,
failures, facts):

- **extractive** (`extract_items`): deterministic decision-state sentences, deduped and capped.
  Used when no model is configured, as the fallback when the model's answer is unusable, and
  on the hot path for the (usually empty) gap a finished summary does not cover yet.
- **model** (`ask_model`): a chat model is asked for the items and its answer validated
  strictly. A local model's malformed answer must never lose state (local models often break
  JSON): the caller retries once, then falls back to the extractive summary.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from tenacity import AsyncRetrying, stop_after_attempt

from memory.json_limits import JSONDepthError, loads_bounded
from memory.model_json import MODEL_ATTEMPTS
from memory.working.context_rules import (
    KIND_ORDER,
    ItemKind,
    normalise_key,
    sentence_kind,
    split_sentences,
)
from memory.working.tokens import (
    content_text,
    count_messages_tokens,
    count_tokens,
    truncate_to_tokens,
)
from memory.working.turns import role_of, summary_matches
from memory.working.working_types import SummaryItem, SummaryMethod, SummaryState, empty_summary
from prompts.summarize import SUMMARY_SYSTEM, build_summary_request

# One sentence is a fact or a rule, not a paragraph: cut at 80 tokens (~60 English words).
MAX_ITEM_TOKENS = 80
# A pasted document must not flood the summary: at most 6 items from one message.
MAX_ITEMS_PER_MESSAGE = 6
# Drop order when over the cap: facts go first, constraints last (the decision state is what a
# summary must keep).
_DROP_ORDER = ("fact", "open_item", "failure", "decision", "constraint")


def make_item(kind: ItemKind, text: str, role: str, index: int) -> SummaryItem | None:
    """A summary item with its text trimmed and capped, or None when the text is empty."""
    text = truncate_to_tokens(" ".join(text.split()), MAX_ITEM_TOKENS)
    if not text:
        return None
    return SummaryItem(kind=kind, text=text, role=role, index=index, tokens=count_tokens(text))


def extract_items(messages: Sequence[BaseMessage], start_index: int) -> list[SummaryItem]:
    """Decision-state items of `messages`, whose first message is history index `start_index`."""
    items: list[SummaryItem] = []
    for offset, msg in enumerate(messages):
        role = role_of(msg)
        if role == "system":
            continue
        found = 0
        for sentence in split_sentences(content_text(msg.content)):
            kind = sentence_kind(sentence, role)
            item = make_item(kind, sentence, role, start_index + offset) if kind else None
            if item is not None:
                items.append(item)
                found += 1
                if found >= MAX_ITEMS_PER_MESSAGE:
                    break
    return items


def merge_items(
    previous: Sequence[SummaryItem], new: Sequence[SummaryItem], max_tokens: int
) -> list[SummaryItem]:
    """Previous + new items, deduped (a restatement moves to its newest index), capped.

    Over `max_tokens`, the oldest items of the least decision-relevant kind go first.
    """
    by_key: dict[str, SummaryItem] = {}
    for item in [*previous, *new]:
        key = normalise_key(item["text"])
        old = by_key.pop(key, None)
        if old is not None and KIND_ORDER.index(old["kind"]) < KIND_ORDER.index(item["kind"]):
            item = item.copy()
            item["kind"] = old["kind"]  # a restated constraint stays a constraint
        by_key[key] = item
    merged = sorted(by_key.values(), key=lambda it: it["index"])
    total = sum(it["tokens"] for it in merged)
    for kind in _DROP_ORDER:
        if total <= max_tokens:
            break
        keep: list[SummaryItem] = []
        for it in merged:
            if it["kind"] == kind and total > max_tokens:
                total -= it["tokens"]
            else:
                keep.append(it)
        merged = keep
    return merged


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
        data = loads_bounded(_FENCE.sub("", answer))
    except (json.JSONDecodeError, JSONDepthError) as exc:
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


log = logging.getLogger(__name__)

# ~1,200 tokens of decision state: a fifth of a 6k working budget, enough for ~60 sentences.
DEFAULT_SUMMARY_TOKENS = 1200


def _resume(
    messages: Sequence[BaseMessage], previous: SummaryState | None
) -> tuple[int, list[SummaryItem], int]:
    """Where to continue from: (start index, items so far, tokens before start)."""
    if previous is None:
        return 0, [], 0
    if not summary_matches(previous, messages):
        log.warning("summary does not match the thread history (rewritten?): rebuilding it")
        return 0, [], 0
    return previous["covers_upto"], list(previous["items"]), previous["prefix_tokens"]


def _finish(
    messages: Sequence[BaseMessage],
    items: list[SummaryItem],
    upto: int,
    prefix_tokens: int,
    method: SummaryMethod,
) -> SummaryState:
    return SummaryState(
        items=items,
        covers_upto=upto,
        last_message_id=messages[upto - 1].id if upto else None,
        prefix_tokens=prefix_tokens,
        method=method,
        tokens=sum(it["tokens"] for it in items),
    )


def extractive_summary(
    messages: Sequence[BaseMessage],
    previous: SummaryState | None = None,
    *,
    upto_index: int | None = None,
    max_tokens: int = DEFAULT_SUMMARY_TOKENS,
) -> SummaryState:
    """Fold `messages[previous.covers_upto:upto_index]` into the summary with rules only."""
    upto = len(messages) if upto_index is None else min(upto_index, len(messages))
    start, items, prefix = _resume(messages, previous)
    if upto <= start:
        return previous if previous is not None else empty_summary()
    chunk = messages[start:upto]
    merged = merge_items(items, extract_items(chunk, start), max_tokens)
    return _finish(messages, merged, upto, prefix + count_messages_tokens(chunk), "extractive")


async def _llm_items(
    model: BaseChatModel,
    chunk: Sequence[BaseMessage],
    start: int,
    previous: list[SummaryItem],
    timeout_s: float,
) -> tuple[list[SummaryItem], set[str]] | None:
    """The model's items, after one retry; None (logged) when both answers are unusable."""
    try:
        # Every failure is retried once here, provider errors too (a summary is not urgent).
        async for attempt in AsyncRetrying(stop=stop_after_attempt(MODEL_ATTEMPTS), reraise=True):
            with attempt:
                number = attempt.retry_state.attempt_number
                try:
                    return await ask_model(model, chunk, start, previous, timeout_s)
                except (SummaryAnswerError, TimeoutError) as exc:
                    log.warning("summary model answer unusable (attempt %d/2): %s", number, exc)
                    raise
                except Exception:  # a provider error must not take the turn down: fall back
                    log.exception("summary model call failed (attempt %d/2)", number)
                    raise
    except Exception:
        return None
    return None


async def refresh_summary(
    messages: Sequence[BaseMessage],
    previous: SummaryState | None,
    *,
    model: BaseChatModel | None = None,
    upto_index: int | None = None,
    max_tokens: int = DEFAULT_SUMMARY_TOKENS,
    timeout_s: float = 60.0,
) -> SummaryState:
    """Fold the messages since `previous` (up to `upto_index`, default all) into the summary.

    Without a model the summary is extractive. With one, the model extracts decision state
    from the new messages (`prompts/summarize.py`); the rule-found constraints are merged in
    anyway, so a model that misses one cannot lose it; an unusable answer (after one retry)
    falls back to the extractive result and is logged.
    """
    if model is None:
        return extractive_summary(messages, previous, upto_index=upto_index, max_tokens=max_tokens)
    upto = len(messages) if upto_index is None else min(upto_index, len(messages))
    start, items, prefix = _resume(messages, previous)
    if upto <= start:
        return previous if previous is not None else empty_summary()
    chunk = messages[start:upto]
    rule_items = extract_items(chunk, start)
    answer = await _llm_items(model, chunk, start, items, timeout_s)
    method: SummaryMethod = "extractive"
    new = rule_items
    if answer is not None:
        llm_items, resolved = answer
        items = [
            it
            for it in items
            if not (it["kind"] == "open_item" and normalise_key(it["text"]) in resolved)
        ]
        new = [*llm_items, *(it for it in rule_items if it["kind"] == "constraint")]
        method = "llm"
    merged = merge_items(items, new, max_tokens)
    return _finish(messages, merged, upto, prefix + count_messages_tokens(chunk), method)
