"""Hard brakes: stop a task before it spins.

The graph calls `check_brakes` before each step; on a trip it hands over to a human
(`interrupt`) or degrades. Counting rules, so "trips at N" is unambiguous:

- `max_steps_per_task=N`: N steps may run; the check trips once `steps >= N`.
- `max_retries_per_action=N`: an action may fail N+1 times in a row (the first try and N
  retries); the check trips once its consecutive failures exceed N.
- `token_budget_per_task=N`: trips once `tokens_used >= N`.

A limit of None switches that brake off.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from typing_extensions import TypedDict

from memory.working.task_state import TaskState

BrakeName = Literal["max_retries_per_action", "max_steps_per_task", "token_budget_per_task"]


@dataclass(frozen=True, slots=True)
class BrakeLimits:
    """Per-task limits. Defaults: 25 steps, 3 retries, 200k tokens (~$1-3 on a mid model)."""

    max_steps_per_task: int | None = 25
    max_retries_per_action: int | None = 3
    token_budget_per_task: int | None = 200_000


class BrakeTrip(TypedDict):
    """Which brake tripped and why (plain data, for state and the interrupt payload)."""

    brake: BrakeName
    value: int
    limit: int
    action: str | None
    reason: str


def _retry_trip(state: TaskState, limit: int, action: str | None) -> BrakeTrip | None:
    retries = state["retries"]
    keys = [action] if action is not None else list(retries)
    worst = max(keys, key=lambda k: retries.get(k, 0), default=None)
    if worst is None or retries.get(worst, 0) <= limit:
        return None
    value = retries[worst]
    return BrakeTrip(
        brake="max_retries_per_action",
        value=value,
        limit=limit,
        action=worst,
        reason=f"action {worst!r} failed {value} times in a row (the limit is {limit} retries)",
    )


def check_brakes(
    state: TaskState, limits: BrakeLimits, *, action: str | None = None
) -> BrakeTrip | None:
    """The first tripped brake (retries, then steps, then tokens), or None to carry on.

    With `action`, only that action's retries are checked; otherwise the worst action's.
    """
    if limits.max_retries_per_action is not None:
        trip = _retry_trip(state, limits.max_retries_per_action, action)
        if trip is not None:
            return trip
    steps, max_steps = state["steps"], limits.max_steps_per_task
    if max_steps is not None and steps >= max_steps:
        return BrakeTrip(
            brake="max_steps_per_task",
            value=steps,
            limit=max_steps,
            action=action,
            reason=f"the task has taken {steps} steps (the limit is {max_steps})",
        )
    used, budget = state["tokens_used"], limits.token_budget_per_task
    if budget is not None and used >= budget:
        return BrakeTrip(
            brake="token_budget_per_task",
            value=used,
            limit=budget,
            action=action,
            reason=f"the task has used {used:,} tokens (the budget is {budget:,})",
        )
    return None
