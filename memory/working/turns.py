"""Turn boundaries, tool-call integrity and cheap token accounting over a message history.

A *turn* starts at a HumanMessage and runs to the next one (assistant replies, tool calls and
tool results belong to the turn that asked for them). Everything here scans from the end, so
the hot path costs O(kept messages), not O(history): a 1,000-turn thread is no slower to
compose than a 10-turn one.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from memory.working.tokens import count_message_tokens, count_messages_tokens
from memory.working.working_types import SummaryState


def role_of(msg: BaseMessage) -> str:
    """'user', 'assistant', 'tool' or 'system'."""
    return {"human": "user", "ai": "assistant", "tool": "tool"}.get(msg.type, "system")


def start_of_last_turns(messages: Sequence[BaseMessage], n: int) -> int:
    """Index where the last `n` turns begin (0 when the history has `n` turns or fewer)."""
    if n <= 0:
        return len(messages)
    seen = 0
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], HumanMessage):
            seen += 1
            if seen == n:
                return i
    return 0


def last_human_index(messages: Sequence[BaseMessage]) -> int | None:
    """Index of the latest user message, or None."""
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], HumanMessage):
            return i
    return None


def repair_tool_pairs(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """Make a kept subsequence valid for chat APIs after older messages were cut.

    Providers reject a tool result whose call is missing and a tool call whose result is
    missing, so orphan ToolMessages are dropped and unanswered tool calls are stripped from
    their AIMessage (an AIMessage left with no text is dropped).
    """
    issued = {
        call["id"]
        for m in messages
        if isinstance(m, AIMessage)
        for call in m.tool_calls
        if call.get("id")
    }
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    out: list[BaseMessage] = []
    for m in messages:
        if isinstance(m, ToolMessage):
            if m.tool_call_id in issued:
                out.append(m)
        elif isinstance(m, AIMessage) and any(c.get("id") not in answered for c in m.tool_calls):
            if m.content:
                out.append(AIMessage(content=m.content, id=m.id, name=m.name))
        else:
            out.append(m)
    return out


def summary_matches(summary: SummaryState | None, messages: Sequence[BaseMessage]) -> bool:
    """True when `summary` was built over this history (same length prefix, same last id)."""
    if summary is None:
        return False
    upto = summary["covers_upto"]
    if upto > len(messages):
        return False
    if upto == 0 or summary["last_message_id"] is None:
        return True
    return messages[upto - 1].id in (None, summary["last_message_id"])


def tokens_before(messages: Sequence[BaseMessage], index: int, summary: SummaryState | None) -> int:
    """Tokens of `messages[:index]`, counting only the part the summary's prefix doesn't know.

    With a matching summary this costs O(|index - covers_upto|) instead of O(index).
    """
    if summary is None or not summary_matches(summary, messages):
        return count_messages_tokens(messages[:index])
    upto = summary["covers_upto"]
    if index >= upto:
        return summary["prefix_tokens"] + count_messages_tokens(messages[upto:index])
    return summary["prefix_tokens"] - sum(count_message_tokens(m) for m in messages[index:upto])
