"""The rolling conversation summary, refreshed OFF the hot path so no answer waits for it.

The graph calls `refresh_summary` after the reply has been sent; the next turn composes with
the newest *finished* summary, which records how much of the history it covers
(`covers_upto`). Each refresh only reads the messages added since the previous one, so its cost
is one turn's worth whatever the thread length.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from tenacity import AsyncRetrying, stop_after_attempt

from memory.model_json import MODEL_ATTEMPTS
from memory.working.context_rules import normalise_key
from memory.working.summary_extract import extract_items, merge_items
from memory.working.summary_llm import SummaryAnswerError, ask_model
from memory.working.tokens import count_messages_tokens
from memory.working.turns import summary_matches
from memory.working.working_types import SummaryItem, SummaryMethod, SummaryState, empty_summary

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
