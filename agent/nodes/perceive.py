"""perceive: sensory memory, turn classification, task state, and the hard brakes (seed 002)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from agent.context import Context
from agent.images import perceive_images, turn_text, with_text, without_images
from agent.state import State
from memory.multimodal import ImageInputError
from memory.working.brakes import BrakeLimits, BrakeTrip, check_brakes
from memory.working.sensory import InputError, extract_features, normalise_input
from memory.working.task_state import new_task_state, record_step, update_task_from_turn
from memory.working.turn_kind import classify_turn


def latest_human(messages: Sequence[BaseMessage]) -> HumanMessage | None:
    """The newest human message of the thread."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return message
    return None


def _limits(ctx: Context) -> BrakeLimits:
    return BrakeLimits(
        max_steps_per_task=ctx.max_steps_per_task,
        max_retries_per_action=ctx.max_retries_per_action,
        token_budget_per_task=ctx.token_budget_per_task,
    )


def _brake(state: State, ctx: Context, trip: BrakeTrip) -> dict[str, Any]:
    """A brake tripped: ask a human (interrupt) or degrade to a plain answer."""
    if ctx.on_brake == "degrade":
        return {"brake": trip}
    answer = interrupt({"type": "brake", **trip, "options": ["continue", "stop"]})
    choice = answer.get("action") if isinstance(answer, dict) else answer
    task = state["task"] if "task" in state else new_task_state()
    if str(choice).lower() in ("continue", "resume", "yes", "approve"):
        # The human takes responsibility for more work: counters restart, the task goes on.
        return {"brake": None, "task": {**task, "steps": 0, "tokens_used": 0, "retries": {}}}
    note = f"Stopped: {trip['reason']}. Start a new task when you are ready."
    return {
        "brake": trip,
        "task": new_task_state(),
        "rejected": f"stopped by a human: {trip['reason']}",
        "messages": [AIMessage(note)],
    }


async def perceive(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Normalise the input, extract features, classify, update task state, check brakes."""
    ctx = runtime.context or Context()
    human = latest_human(list(state["messages"]))
    if human is None:
        return {"rejected": "no user message in the input"}
    try:
        seen = await perceive_images(human)
        text = normalise_input(turn_text(human, seen), ctx.max_input_chars, on_overflow="truncate")
    except (InputError, ImageInputError) as exc:
        reply = AIMessage(f"I could not use that message: {exc}.")
        # A refused image is not kept in the thread's state: its text stays, the image goes.
        kept = [without_images(human)] if isinstance(exc, ImageInputError) else []
        return {"rejected": str(exc), "messages": [*kept, reply]}
    update: dict[str, Any] = {"rejected": "", "brake": None, "images": [], "image_needles": []}
    if seen is not None:  # images re-encoded without metadata, text cleaned
        update["messages"] = [HumanMessage(content=with_text(seen, text), id=human.id)]
        update.update(images=seen.features, image_needles=seen.needles)
    elif text != human.content:  # cleaned or truncated: replace the stored message (same id)
        update["messages"] = [HumanMessage(content=text, id=human.id)]
    kind = classify_turn(text)
    task = update_task_from_turn(state.get("task"), text, kind)
    task = record_step(task, tokens=extract_features(text)["tokens"])
    update.update(sensory=extract_features(text), turn_kind=kind, task=task)
    trip = check_brakes(task, _limits(ctx))
    if trip is not None:
        update.update(_brake({**state, "task": task}, ctx, trip))
    return update
