"""A secret split across a thread's user messages is redacted in each of them, wherever kept.

"my password is" in one turn and the value in the next, or a key sent in halves: each message
alone passed the filter, so the earlier parts are already in the thread's checkpoints, maybe in
a memory. `perceive` calls `split_parts` with the thread's messages and this turn's cleaned
text; when the join of the latest user messages reveals a secret
(`memory.gating.privacy.splits`), every part is replaced by its placeholder: in the state (the
same message ids, so the model never sees the parts together) and, by `remove_parts`, in the
thread's earlier checkpoint rows and in the memories written from the thread (deleted with
their versions, vectors and audit text). The rows this turn's input wrote may still be in
flight while perceive runs, so `gate_and_store` scrubs once more at the end of the turn
(`scrub_again`); the parts wait for it in this process only, for one turn.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage

from memory.gating.privacy import placeholder
from memory.gating.privacy.splits import WINDOW, split_secrets
from memory.multimodal import text_parts
from memory.storage.checkpoint_scrub import replace_in_checkpoints, swap_strings
from memory.storage.forget_one import delete_memory, memories_holding
from memory.storage.store import MemoryStore
from memory.types import Scope

log = logging.getLogger(__name__)

# Parts waiting for the end-of-turn scrub, by thread; bounded (a turn that fails before
# gate_and_store leaves its entry until pushed out).
_PENDING: OrderedDict[str, dict[str, str]] = OrderedDict()
_PENDING_THREADS = 1024


def split_parts(
    messages: Sequence[BaseMessage], current: HumanMessage
) -> tuple[list[HumanMessage], dict[str, str]]:
    """The user messages to replace (redacted, same ids) and each raw part's placeholder.

    `current` is this turn's message as perceive cleaned it (it replaces the one in `messages`
    with the same id). CPU work on at most `WINDOW` messages: call it off the event loop.
    """
    humans = [m for m in messages if isinstance(m, HumanMessage) and m.id != current.id]
    recent = [*humans[-(WINDOW - 1) :], current]
    texts = [text_parts(m.content) for m in recent]
    found = split_secrets(texts)
    parts: dict[str, str] = {}
    replaced: list[HumanMessage] = []
    for message, text, spans in zip(recent, texts, found, strict=True):
        if not spans:
            continue
        mine = {text[s:e]: placeholder(kind) for s, e, kind in spans if text[s:e].strip()}
        parts.update(mine)
        replaced.append(HumanMessage(content=without_parts(message.content, mine), id=message.id))
    return replaced, parts


def without_parts(value: Any, parts: dict[str, str]) -> Any:
    """`value` (a message's content, a task state) with every part replaced by its placeholder."""
    return swap_strings(value, lambda text: _swap(text, parts))


def _swap(text: str, parts: dict[str, str]) -> str | None:
    out = text
    for part in sorted(parts, key=len, reverse=True):  # a longer part before one inside it
        out = out.replace(part, parts[part])
    return None if out == text else out


async def remove_parts(
    store: MemoryStore, scope: Scope | None, thread_id: str | None, parts: dict[str, str]
) -> None:
    """Scrub the parts of a split secret from the thread's checkpoints and its memories."""
    log.info("a secret split across a thread's messages was redacted (%d parts)", len(parts))
    if not thread_id:
        return
    _PENDING[thread_id] = {**_PENDING.pop(thread_id, {}), **parts}
    while len(_PENDING) > _PENDING_THREADS:
        _PENDING.popitem(last=False)
    await _scrub(store, thread_id, parts)
    if scope is None:
        return
    for memory_id in await memories_holding(store, scope, thread_id, list(parts)):
        await delete_memory(store, scope, memory_id, reason="held part of a split secret")


async def scrub_again(store: MemoryStore, thread_id: str | None) -> int:
    """End of turn: scrub the parts perceive found from rows written since (this turn's input)."""
    parts = _PENDING.pop(thread_id, None) if thread_id else None
    return await _scrub(store, str(thread_id), parts) if parts else 0


async def _scrub(store: MemoryStore, thread_id: str, parts: dict[str, str]) -> int:
    def replace_all(text: str) -> str:
        return _swap(text, parts) or text

    async with store.pool.acquire() as conn:
        # Every channel: the task state and summary are derived from the user's words too.
        replacements = dict.fromkeys(parts, replace_all)
        return await replace_in_checkpoints(conn, thread_id, replacements, channels=None)


__all__ = ["remove_parts", "scrub_again", "split_parts", "without_parts"]
