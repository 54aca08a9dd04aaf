"""Budget helpers for the composer: squeeze the latest turn, pack sections by priority."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from langchain_core.messages import BaseMessage

from memory.working.prompt_sections import Section
from memory.working.tokens import (
    content_text,
    count_message_tokens,
    count_messages_tokens,
    count_tokens,
    truncate_to_tokens,
)
from prompts.agent import TRUNCATED_NOTE

log = logging.getLogger(__name__)

_NOTE_TOKENS = count_tokens(TRUNCATED_NOTE.format(cut=10**9)) + 1


def _shrink_once(turn: Sequence[BaseMessage], room: int) -> list[BaseMessage]:
    texts = [content_text(m.content) for m in turn]
    sizes = [count_tokens(t) for t in texts]
    fixed = sum(count_message_tokens(m) for m in turn) - sum(sizes)
    share = max(room - fixed, 0)
    total = max(sum(sizes), 1)
    out: list[BaseMessage] = []
    for msg, txt, size in zip(turn, texts, sizes, strict=True):
        allow = share * size // total
        if size <= allow:
            out.append(msg)
            continue
        kept = truncate_to_tokens(txt, allow - _NOTE_TOKENS) if allow > _NOTE_TOKENS else ""
        note = TRUNCATED_NOTE.format(cut=size - count_tokens(kept))
        content = f"{kept}\n{note}" if kept else (note if allow >= _NOTE_TOKENS else "")
        out.append(msg.model_copy(update={"content": content}))
    return out


def shrink_turn(turn: Sequence[BaseMessage], cap: int) -> tuple[list[BaseMessage], int]:
    """The latest turn cut to `cap` tokens, each message in proportion to its size.

    Returns the messages and the tokens cut. Every message stays (the user message is always
    kept); a cut one ends with a note saying how much was removed.
    """
    before = count_messages_tokens(turn)
    out = list(turn)
    room = cap
    for _ in range(4):  # rounding can overshoot by a few tokens: tighten and retry
        if count_messages_tokens(out) <= cap:
            break
        out = _shrink_once(turn, room)
        room -= max(count_messages_tokens(out) - cap, 1)
    if count_messages_tokens(out) > cap:
        log.warning("latest turn still over its %d-token cap after shrinking", cap)
    return out, max(before - count_messages_tokens(out), 0)


def pack_tier(tier: Sequence[Section], left: int) -> tuple[dict[str, list[int]], int]:
    """Choose lines of one priority tier within `left` tokens, by their packing keys.

    A section's header is charged with its first line; each line is charged one token for its
    line break (the counter is subadditive up to one token per join, so this never undercounts).
    """
    pool = sorted(
        ((s, i) for s in tier for i in range(len(s.lines))), key=lambda p: p[0].keys[p[1]]
    )
    chosen: dict[str, list[int]] = {s.name: [] for s in tier}
    headers = {s.name: count_tokens(s.header) + 2 for s in tier}
    used = 0
    for section, i in pool:
        cost = count_tokens(section.lines[i]) + 1
        if not chosen[section.name]:
            cost += headers[section.name]
        if used + cost <= left:
            chosen[section.name].append(i)
            used += cost
    return chosen, used


def render(section: Section, chosen: Sequence[int]) -> str:
    """Header plus the chosen lines in display order ('' when none was chosen)."""
    if not chosen:
        return ""
    return "\n".join([section.header, *(section.lines[i] for i in sorted(chosen))])


def newest_suffix(older: Sequence[BaseMessage], left: int) -> list[BaseMessage]:
    """The newest contiguous messages of `older` that fit `left` tokens."""
    used = 0
    start = len(older)
    for i in range(len(older) - 1, -1, -1):
        used += count_message_tokens(older[i])
        if used > left:
            break
        start = i
    return list(older[start:])
