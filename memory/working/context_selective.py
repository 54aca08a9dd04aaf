"""Selective retention (seed 000 §2.2.3): keep the most important messages within a budget.

Importance is rule-based (`memory.working.context_rules.importance`: constraints, decisions, errors,
numbers, names), not a model call per message (the seed's version costs one LLM call per
message). A small recency term breaks ties toward newer messages. The latest turn is always kept.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage

from memory.working.context_rules import importance
from memory.working.tokens import content_text, count_message_tokens
from memory.working.turns import last_human_index, role_of

# Recency is worth at most half a "number" signal: importance decides, recency breaks ties.
RECENCY_WEIGHT = 0.5


def select_messages(messages: Sequence[BaseMessage], budget_tokens: int) -> list[BaseMessage]:
    """The most important messages that fit `budget_tokens`, in their original order.

    The latest turn (last user message and what follows it) is kept first, whatever it costs.
    Orphaned tool results are repaired later by `repair_tool_pairs`.
    """
    cut = last_human_index(messages)
    cut = 0 if cut is None else cut
    keep = set(range(cut, len(messages)))
    used = sum(count_message_tokens(messages[i]) for i in keep)
    n = max(cut, 1)
    scored = []
    for i in range(cut):
        msg = messages[i]
        role = role_of(msg)
        if role == "system":
            continue
        score = importance(content_text(msg.content), role) + RECENCY_WEIGHT * i / n
        scored.append((score, i))
    for _, i in sorted(scored, reverse=True):
        cost = count_message_tokens(messages[i])
        if used + cost <= budget_tokens:
            keep.add(i)
            used += cost
    return [messages[i] for i in sorted(keep)]
