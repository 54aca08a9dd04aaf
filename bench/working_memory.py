"""Working-memory benchmark: prompt size and compose latency over long synthetic conversations.

For 50 / 200 / 1,000-turn scripted conversations (no model), each turn runs the hot path
(task-state update, `build_working_context` with the chosen strategy, `compose_prompt`) and,
after the "reply", the summary refresh (off the hot path, timed separately). Prints prompt
tokens vs. the full history, and latency percentiles.

    python -m bench.working_memory [--turns 50 200 1000] [--json OUT]

Targets: at 200 turns the prompt is at most 15 % of the full history; compose p95 < 5 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from memory.working.composer import ComposedPrompt, compose_prompt
from memory.working.context_window import STRATEGIES, build_working_context
from memory.working.scratchpad import ScratchpadEntry, write
from memory.working.summary import refresh_summary
from memory.working.task_state import TaskState, update_task_from_turn
from memory.working.tokens import MESSAGE_OVERHEAD, count_message_tokens, count_tokens
from memory.working.working_types import StrategyName, SummaryState
from prompts.agent import DEFAULT_SYSTEM_RULES

CONSTRAINT = "Never run migrations against the production database."
_TOPICS = ["billing", "search", "auth", "reports", "exports", "alerts", "caching", "the CLI"]
_USER = [
    "Can you add pagination to the {t} endpoint with a page size of {n}?",
    "Why does the {t} job take {n} seconds on staging?",
    "Please write tests for {t} covering the {n} edge cases we listed.",
    "We decided to keep {t} behind a feature flag until release {n}.",
    "The {t} deploy failed with error 503 after {n} retries.",
    "Refactor {t} so the handler is under {n} lines.",
    "What is left to do on {t}?",
]
_FILLER = (
    "I looked at the {t} module and traced the call path from the router through the service "
    "layer down to the repository. The main cost is in serialising {n} rows one at a time, so "
    "I batched the query and moved the formatting out of the loop. "
)


def synthetic_turn(rng: random.Random, turn: int) -> tuple[str, str]:
    """One (user, assistant) exchange; turn 0 states the task and a constraint."""
    if turn == 0:
        user = f"New task: harden the order service before launch. {CONSTRAINT}"
    else:
        user = rng.choice(_USER).format(t=rng.choice(_TOPICS), n=rng.randint(2, 500))
    topic, n = rng.choice(_TOPICS), rng.randint(10, 9000)
    body = _FILLER.format(t=topic, n=n) * rng.randint(2, 5)
    if rng.random() < 0.3:
        body += "\n```python\ndef handler(req):\n    return paginate(req, size=50)\n```\n"
    return user, body + f"Next step: review {topic} with the team."


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(q * len(ordered)), len(ordered) - 1)]


def hot_path(
    messages: list[BaseMessage],
    summary: SummaryState | None,
    task: TaskState,
    pad: list[ScratchpadEntry],
    strategy: StrategyName,
    budget: int,
) -> ComposedPrompt:
    """What a turn does before the model call: working context, then the composed prompt."""
    working = build_working_context(
        messages, strategy=strategy, summary=summary, budget_tokens=budget * 2 // 3
    )
    return compose_prompt(
        system_rules=DEFAULT_SYSTEM_RULES,
        preferences=[{"key": "language", "value": "English"}],
        task_state=task,
        scratchpad=pad,
        evidence=[],
        working=working,
        budget_tokens=budget,
    )


async def run_conversation(
    turns: int, strategy: StrategyName, budget: int, seed: int = 7
) -> dict[str, Any]:
    """Run one conversation; return per-turn figures and summary statistics."""
    rng = random.Random(seed)
    messages: list[BaseMessage] = []
    summary: SummaryState | None = None
    task: TaskState | None = None
    pad = write([], "Checked the order service's 12 endpoints; 3 lack tests.", "progress")
    full = MESSAGE_OVERHEAD + count_tokens(DEFAULT_SYSTEM_RULES)
    compose_ms: list[float] = []
    refresh_ms: list[float] = []
    prompt_tokens: list[int] = []
    full_tokens: list[int] = []
    constraint_kept = True
    for turn in range(turns):
        user, reply = synthetic_turn(rng, turn)
        messages.append(HumanMessage(user, id=f"u{turn}"))
        full += count_message_tokens(messages[-1])
        task = update_task_from_turn(task, user)
        start = time.perf_counter()
        prompt = hot_path(messages, summary, task, pad, strategy, budget)
        compose_ms.append((time.perf_counter() - start) * 1000)
        prompt_tokens.append(prompt["total_tokens"])
        full_tokens.append(full)
        constraint_kept &= CONSTRAINT in str(prompt["messages"][0].content)
        messages.append(AIMessage(reply, id=f"a{turn}"))
        full += count_message_tokens(messages[-1])
        start = time.perf_counter()
        summary = await refresh_summary(messages, summary)
        refresh_ms.append((time.perf_counter() - start) * 1000)
    return _report(turns, strategy, budget, compose_ms, refresh_ms, prompt_tokens, full_tokens) | {
        "constraint_in_every_prompt": constraint_kept
    }


def _report(
    turns: int,
    strategy: str,
    budget: int,
    compose_ms: list[float],
    refresh_ms: list[float],
    prompt_tokens: list[int],
    full_tokens: list[int],
) -> dict[str, Any]:
    return {
        "turns": turns,
        "strategy": strategy,
        "budget_tokens": budget,
        "final_prompt_tokens": prompt_tokens[-1],
        "final_full_history_tokens": full_tokens[-1],
        "final_ratio": round(prompt_tokens[-1] / full_tokens[-1], 4),
        "mean_prompt_tokens": round(statistics.fmean(prompt_tokens), 1),
        "mean_ratio": round(
            statistics.fmean(p / f for p, f in zip(prompt_tokens, full_tokens, strict=True)), 4
        ),
        "max_prompt_tokens": max(prompt_tokens),
        "compose_ms_p50": round(_pct(compose_ms, 0.5), 3),
        "compose_ms_p95": round(_pct(compose_ms, 0.95), 3),
        "refresh_ms_p50": round(_pct(refresh_ms, 0.5), 3),
        "refresh_ms_p95": round(_pct(refresh_ms, 0.95), 3),
        "prompt_tokens_per_turn": prompt_tokens,
        "full_history_tokens_per_turn": full_tokens,
    }


def _print(result: dict[str, Any]) -> None:
    print(
        f"{result['turns']:>5} turns  prompt {result['final_prompt_tokens']:>6,} tok  "
        f"full {result['final_full_history_tokens']:>8,} tok  ratio {result['final_ratio']:.1%}  "
        f"compose p50 {result['compose_ms_p50']:.2f} ms p95 {result['compose_ms_p95']:.2f} ms  "
        f"mean ratio {result['mean_ratio']:.1%}  "
        f"refresh p50 {result['refresh_ms_p50']:.2f} ms p95 {result['refresh_ms_p95']:.2f} ms  "
        f"constraint kept: {result['constraint_in_every_prompt']}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, nargs="+", default=[50, 200, 1000])
    parser.add_argument("--strategy", default="hybrid", choices=STRATEGIES)
    parser.add_argument("--budget", type=int, default=6000, help="compose budget in tokens")
    parser.add_argument("--json", type=Path, help="write the full results here")
    args = parser.parse_args(argv)
    results = []
    for turns in args.turns:
        result = asyncio.run(run_conversation(turns, args.strategy, args.budget))
        _print(result)
        results.append(result)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
