"""The deterministic, extractive summary: decision-state sentences, deduped and capped.

Used when no model is configured, as the fallback when the model's answer is unusable, and on
the hot path for the (usually empty) gap a finished summary does not cover yet.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage

from memory.working.context_rules import (
    KIND_ORDER,
    ItemKind,
    normalise_key,
    sentence_kind,
    split_sentences,
)
from memory.working.tokens import content_text, count_tokens, truncate_to_tokens
from memory.working.turns import role_of
from memory.working.working_types import SummaryItem

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
