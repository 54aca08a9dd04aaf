"""Whose words a question asks about: the asker's own, or what the assistant said.

A user asking "what was my previous occupation?" or "我女儿多大了？" asks about something they
said; in a history imported with both sides of the chat, the assistant's long replies repeat
the topic's words and meaning and outranked the user's one sentence that answers. "What did
you recommend for the trip?" or "你上次推荐的那本书叫什么？" asks about the assistant's words
instead. A question that refers back to "our previous chat" without saying whose words it
wants (and one in neither person) says nothing either way.

A long user message with no "I" or "我" in it (a judgment, an article, a log pasted in) is
the user's message but not their words about themselves: it is read as a document, lifted for
neither side.

Every pattern is linear in the query: fixed alternations and at most one optional word between
"you" and its verb.
"""

from __future__ import annotations

import re
from typing import Literal

Role = Literal["user", "assistant"]
MemoryRole = Literal["user", "assistant", "document"]
DOCUMENT_CHARS = 400
"""A user message this long with no "I" or "我" is read as pasted material. Whoever speaks of
themselves for a paragraph says "I" somewhere; in the LongMemEval development chats no user
message of 200 characters or more without it holds a question's evidence."""

_TOLD = (
    r"told|said|mentioned|recommended|suggested|gave|provided|listed|shared|wrote|explained|"
    r"described|proposed|offered|named|called|came\s+up\s+with|put\s+together|pointed\s+out"
)
_TELL = r"tell|say|mention|recommend|suggest|give|provide|list|share|write|explain|describe|call"
_EN_ASSISTANT = re.compile(
    rf"\byou(?:'ve|'d|\s+had|\s+have)?\s+(?:[a-z]+\s+)?(?:{_TOLD})\b"
    rf"|\b(?:did|have|had)\s+you\s+(?:[a-z]+\s+)?(?:{_TELL}|{_TOLD})\b"
    r"|\byour\s+(?:earlier\s+|previous\s+|last\s+)?"
    r"(?:suggestions?|recommendations?|advice|answer|reply|response|list|tips|ideas)\b",
    re.IGNORECASE,
)
_EN_CONVERSATION = re.compile(
    r"\b(?:our|the|that)\s+(?:previous|last|earlier|past|prior|other)\s+"
    r"(?:chats?|conversations?|discussions?|sessions?|talks?|exchanges?)\b",
    re.IGNORECASE,
)
_EN_FIRST = re.compile(r"\b(?:i|me|my|mine|myself|we|us|our|ours|ourselves)\b", re.IGNORECASE)

# Not after 跟/和/对/给/向/同/告诉: "我跟你说过" is the user telling, "you" its object.
_ZH_ASSISTANT = re.compile(
    r"(?<![跟和对给向同诉])[你您](?:之前|上次|刚才|以前|曾经|当时|那时)?"
    r"(?:说|讲|提|推荐|建议|告诉|给|列|写|介绍|分享)"
)
_ZH_CONVERSATION = re.compile(r"(?:之前|上次|以前|刚才)(?:的)?(?:聊天|对话|谈话|讨论)")
_ZH_FIRST = re.compile(r"[我咱]")


def asked_of(query: str) -> Role | None:
    """Whose words `query` asks about.

    "assistant" for the assistant's, "user" for a question in the first person, None when it
    says neither (or refers back to the chat without saying whose words it wants). A query of
    several lines (a dialogue so far) is judged by its last line, the turn that asks.
    """
    lines = [line for line in query.splitlines() if line.strip()]
    query = lines[-1] if lines else query
    if _EN_ASSISTANT.search(query) or _ZH_ASSISTANT.search(query):
        return "assistant"
    if _EN_CONVERSATION.search(query) or _ZH_CONVERSATION.search(query):
        return None
    if _EN_FIRST.search(query) or _ZH_FIRST.search(query):
        return "user"
    return None


# The singular first person: a court's or a company's "we" runs through pasted documents.
_SPEAKS_OF_SELF = re.compile(r"\b(?:i|me|my|mine|myself)\b|我", re.IGNORECASE)


def role_of(value: object, text: str = "") -> MemoryRole | None:
    """A memory's role from its recorded one ("user", "assistant"); anything else is unknown.

    A user's message of `DOCUMENT_CHARS` or more that never says "I" or "我" is a "document".
    """
    if value == "assistant":
        return "assistant"
    if value != "user":
        return None
    pasted = len(text) >= DOCUMENT_CHARS and not _SPEAKS_OF_SELF.search(text)
    return "document" if pasted else "user"


__all__ = ["DOCUMENT_CHARS", "MemoryRole", "Role", "asked_of", "role_of"]
