"""The off-topic run: how often recall would inject something when nothing is relevant.

Each conversation's questions are asked against a *different* conversation's memories (the
next one, cyclically), and a fixed list of greetings and chit-chat is asked against every
conversation. A query counts as injecting when any of its hits passes the relevance floor.
"""

from __future__ import annotations

from typing import Any

from bench._locomo_backends import Backend
from bench._locomo_data import Conversation
from bench._locomo_memories import scope_for

K = 10
MAIN_CATEGORIES = (1, 2, 3, 4)

CHITCHAT = (
    "hi",
    "Hello there!",
    "hey, how are you?",
    "Good morning :)",
    "thanks!",
    "Thank you so much, that's all for today.",
    "ok",
    "cool, sounds good",
    "bye, see you later",
    "haha nice",
    "Great, thanks a lot!",
    "lol",
    "你好",
    "谢谢！",
    "好的，明白了",
    "再见",
)


async def _foreign(backend: Backend, conv: Conversation, other: Conversation) -> tuple[int, int]:
    """`conv`'s questions asked of `other`'s memories: (asked, injecting anything)."""
    asked = injected = 0
    for question in conv.questions:
        if question.category not in MAIN_CATEGORIES:
            continue
        hits = await backend.recall(scope_for(other), question.question, K, now=other.last_date)
        asked += 1
        injected += any(h.passed for h in hits)
    return asked, injected


async def offtopic(backend: Backend, convs: list[Conversation]) -> dict[str, Any]:
    """Injection rates for foreign questions and for chit-chat (backends must hold `convs`)."""
    foreign = injected_foreign = 0
    if len(convs) > 1:
        for i, conv in enumerate(convs):
            asked, injected = await _foreign(backend, conv, convs[(i + 1) % len(convs)])
            foreign += asked
            injected_foreign += injected
    chat = injected_chat = 0
    for conv in convs:
        for text in CHITCHAT:
            hits = await backend.recall(scope_for(conv), text, K, now=conv.last_date)
            chat += 1
            injected_chat += any(h.passed for h in hits)
    total = foreign + chat
    return {
        "offtopic_injection_rate": round((injected_foreign + injected_chat) / max(total, 1), 4),
        "offtopic_questions_rate": round(injected_foreign / max(foreign, 1), 4),
        "chitchat_injection_rate": round(injected_chat / max(chat, 1), 4),
        "offtopic_queries": total,
    }


async def cross_offtopic(
    backend: Backend, sets: dict[str, list[Conversation]]
) -> dict[str, dict[str, Any]]:
    """Each set's questions asked of one conversation of every other set.

    Backends must hold them all. Within one development set the conversations share their
    domain and filler replies (two coding chats both discuss queues), so a question from one is
    not clearly off-topic for the other; a question from another set is. Asked of the next set
    only, a set's rate rested on whichever set happened to sort after it.
    """
    names = list(sets)
    out: dict[str, dict[str, Any]] = {}
    if len(names) < 2:
        return out
    for name in names:
        others = [n for n in names if n != name]
        asked = injected = 0
        for i, conv in enumerate(sets[name]):
            for foreign in (sets[n] for n in others):
                a, n = await _foreign(backend, conv, foreign[i % len(foreign)])
                asked, injected = asked + a, injected + n
        out[name] = {
            "against": others,
            "queries": asked,
            "injection_rate": round(injected / max(asked, 1), 4),
        }
    return out
