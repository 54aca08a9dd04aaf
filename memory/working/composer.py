"""The prompt composer: pack everything into one token budget.

Fixed priority when the budget is tight: system rules > long-term preferences > current task
state (with its constraints) > scratchpad > retrieved evidence > conversation summary and key
decisions > older recent turns. The latest user turn is always kept (cut, with a note, if it
alone exceeds the budget). Evidence goes in as cited snippets under an "evidence, not
instructions" header. The result is one SystemMessage with the sections, then the raw turns;
its total by `memory.working.tokens` never exceeds `budget_tokens`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from langchain_core.messages import BaseMessage, SystemMessage
from typing_extensions import TypedDict

from memory.working.context_rules import normalise_key
from memory.working.prompt_sections import (
    EvidenceItem,
    PrefItem,
    Section,
    evidence_section,
    items_section,
    preferences_section,
    scratchpad_section,
    task_section,
)
from memory.working.scratchpad import ScratchpadEntry
from memory.working.task_state import TaskState
from memory.working.tokens import (
    MESSAGE_OVERHEAD,
    content_text,
    count_message_tokens,
    count_messages_tokens,
    count_tokens,
    truncate_to_tokens,
)
from memory.working.turns import last_human_index, repair_tool_pairs
from memory.working.working_types import WorkingContext
from prompts.agent import DECISIONS_HEADER, SUMMARY_HEADER, TRUNCATED_NOTE

__all__ = ["ComposedPrompt", "EvidenceItem", "PrefItem", "compose_prompt"]

log = logging.getLogger(__name__)

_NOTE_TOKENS = count_tokens(TRUNCATED_NOTE.format(cut=10**9)) + 1


class ComposedPrompt(TypedDict):
    """The messages to send, and where the tokens went."""

    messages: list[BaseMessage]
    sections: dict[str, int]  # tokens per section, plus "history" and "current_turn"
    dropped: dict[str, int]  # lines (or, for "history", messages) left out per section
    total_tokens: int
    budget_tokens: int
    cited_ids: list[str]  # full ids of the evidence that made it in


def _mandatory(
    rules: str, current: list[BaseMessage], budget: int
) -> tuple[str, list[BaseMessage], int]:
    """System rules and the latest turn, cut so that both fit (the turn keeps up to half)."""
    floor = min(count_messages_tokens(current), budget // 2)
    max_rules = budget - MESSAGE_OVERHEAD - floor
    if count_tokens(rules) > max_rules:
        log.warning("system rules exceed the %d tokens left for them: truncated", max_rules)
        rules = truncate_to_tokens(rules, max_rules)
    cap = budget - MESSAGE_OVERHEAD - count_tokens(rules)
    if count_messages_tokens(current) <= cap:
        return rules, current, 0
    shrunk, cut = shrink_turn(current, cap)
    return rules, shrunk, cut


def _tiers(
    preferences: Sequence[PrefItem],
    task_state: TaskState | None,
    scratchpad: Sequence[ScratchpadEntry],
    evidence: Sequence[EvidenceItem],
    working: WorkingContext,
) -> list[list[Section]]:
    # A constraint already in the task state need not be repeated from the summary.
    known = {normalise_key(c) for c in task_state["constraints"]} if task_state else set()
    summary = [it for it in working["summary"] if normalise_key(it["text"]) not in known]
    decisions = [it for it in working["decisions"] if normalise_key(it["text"]) not in known]
    return [
        [preferences_section(preferences)],
        [task_section(task_state)],
        [scratchpad_section(scratchpad)],
        [evidence_section(evidence)],
        [
            items_section("summary", SUMMARY_HEADER, summary),
            items_section("decisions", DECISIONS_HEADER, decisions),
        ],
    ]


def _pack_sections(
    tiers: list[list[Section]], left: int
) -> tuple[list[str], dict[str, int], dict[str, int], list[str], int]:
    """Pack tiers in priority order.

    Returns the rendered blocks, tokens per section, lines dropped per section, the cited
    evidence ids and the tokens left.
    """
    blocks: list[str] = []
    sections: dict[str, int] = {}
    dropped: dict[str, int] = {}
    cited: list[str] = []
    for tier in tiers:
        chosen, used = pack_tier(tier, left)
        left -= used
        for section in tier:
            block = render(section, chosen[section.name])
            if block:
                blocks.append(block)
            sections[section.name] = count_tokens(block)
            dropped[section.name] = len(section.lines) - len(chosen[section.name])
            cited += [section.ids[i] for i in sorted(chosen[section.name]) if section.ids[i]]
    return blocks, sections, dropped, cited, left


def compose_prompt(
    *,
    system_rules: str,
    preferences: Sequence[PrefItem],
    task_state: TaskState | None,
    scratchpad: Sequence[ScratchpadEntry],
    evidence: Sequence[EvidenceItem],
    working: WorkingContext,
    budget_tokens: int,
) -> ComposedPrompt:
    """Compose the prompt for this turn within `budget_tokens` (see the module docstring)."""
    recent = working["messages"]
    cut = last_human_index(recent)
    cut = len(recent) if cut is None else cut
    rules, current, cut_tokens = _mandatory(system_rules.strip(), list(recent[cut:]), budget_tokens)
    left = budget_tokens - MESSAGE_OVERHEAD - count_tokens(rules) - count_messages_tokens(current)
    packed = _pack_sections(_tiers(preferences, task_state, scratchpad, evidence, working), left)
    blocks, by_section, dropped, cited, left = packed
    sections = {"system_rules": count_tokens(rules), **by_section}
    history = newest_suffix(recent[:cut], left)
    system, history = _enforce(
        "\n\n".join(b for b in [rules, *blocks] if b), history, current, budget_tokens
    )
    # An empty system message is rejected by some providers: leave it out instead.
    messages = [*([system] if system.content else []), *history, *current]
    sections["history"] = count_messages_tokens(history)
    sections["current_turn"] = count_messages_tokens(current)
    dropped["history"] = cut - len(history)
    dropped["current_turn_tokens"] = cut_tokens
    return ComposedPrompt(
        messages=messages,
        sections=sections,
        dropped=dropped,
        total_tokens=count_messages_tokens(messages),
        budget_tokens=budget_tokens,
        cited_ids=cited,
    )


def _enforce(
    system_text: str, history: list[BaseMessage], current: list[BaseMessage], budget: int
) -> tuple[SystemMessage, list[BaseMessage]]:
    """Repair history's tool pairs; then, as a safety net, make the total fit.

    The packing above already fits. Should rounding ever disagree, the oldest history goes
    first, then the end of the system text.
    """
    # History ends where the latest turn starts, so its tool pairs are self-contained.
    history = repair_tool_pairs(history)
    fixed = count_messages_tokens(current) + MESSAGE_OVERHEAD
    while history and fixed + count_tokens(system_text) + count_messages_tokens(history) > budget:
        log.warning("composed prompt over budget by rounding: dropping the oldest history message")
        history = repair_tool_pairs(history[1:])
    if fixed + count_tokens(system_text) > budget:
        log.warning("composed prompt over budget by rounding: cutting the system text")
        system_text = truncate_to_tokens(system_text, budget - fixed)
    return SystemMessage(content=system_text), history


# -- budget helpers: squeeze the latest turn, pack sections by priority ------------------------


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
