"""compose: the prompt composer.

System rules > long-term preferences > task
state > retrieved evidence as cited snippets, packed within the token budget, with the working
memory strategy (hybrid by default: last 3 turns raw, 3-10 summarised, older as key decisions).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from langchain_core.messages import messages_to_dict
from langgraph.runtime import Runtime

from agent.context import Context
from agent.state import State
from memory.gating.gate import is_instruction_like
from memory.working.composer import compose_prompt
from memory.working.context_window import build_working_context
from memory.working.prompt_sections import PrefItem
from prompts.agent import DEFAULT_SYSTEM_RULES, DEGRADED_NOTE

log = logging.getLogger(__name__)


def _rules(state: State, ctx: Context) -> str:
    rules = ctx.base_system_prompt.strip() or DEFAULT_SYSTEM_RULES
    if ctx.system_prompt.strip():
        rules = f"{rules}\n\n{ctx.system_prompt.strip()}"
    brake = state.get("brake")
    if brake:
        rules = f"{rules}\n\n{DEGRADED_NOTE.format(reason=brake['reason'])}"
    return rules


def followable(preferences: list[PrefItem]) -> list[PrefItem]:
    """The preferences that pass the poisoning screen now; the rest never reach the prompt.

    Recall screens them already; this is the last look before the "follow these" section, for
    preferences that reached the state another way or rows stored before the screen knew a
    phrasing (the screen improves, stored text does not).
    """
    kept = [p for p in preferences if not is_instruction_like(f"{p['key']}: {p['value']}")]
    if len(kept) < len(preferences):
        log.warning(
            "compose: %d preference(s) failed the screen; left out", len(preferences) - len(kept)
        )
    return kept


def _compose(state: State, ctx: Context) -> dict[str, Any]:
    working = build_working_context(
        list(state["messages"]),
        strategy=ctx.context_strategy,
        summary=state.get("summary"),
        budget_tokens=ctx.prompt_budget_tokens,
        recent_turns=ctx.recent_turns,
        summary_turns=ctx.summary_turns,
    )
    composed = compose_prompt(
        system_rules=_rules(state, ctx),
        preferences=followable(list(state.get("preferences") or [])),
        task_state=state.get("task"),
        scratchpad=state.get("scratchpad") or [],
        evidence=state.get("evidence") or [],
        working=working,
        budget_tokens=ctx.prompt_budget_tokens,
    )
    return {
        # Serialised, not messages: a list of messages in a node's output is streamed to the
        # chat (`messages` stream mode), and the composed system prompt is not a chat message.
        "prompt": messages_to_dict(composed["messages"]),
        "prompt_tokens": {**composed["sections"], "total": composed["total_tokens"]},
        "injected_ids": composed["cited_ids"],
    }


async def compose(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Build this turn's prompt from working memory, rules, preferences and evidence."""
    # Token counting and packing a 64,000-character turn is pure CPU: off the event loop.
    return await asyncio.to_thread(_compose, state, runtime.context or Context())
