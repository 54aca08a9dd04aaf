"""The tool through which the model says the task in hand is done.

Like the scratchpad tools it does not touch state: it returns a short reply for the model and,
as the ToolMessage `artifact`, the outcome the graph acts on (`finished_outcome`): the task
state starts afresh, and under an explicit sharing rule the completed task is published to the
tenant's shared agent memory.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.tools import tool

from memory.working.tokens import truncate_to_tokens

FINISH_TOOL = "finish_task"
# An outcome is one or two sentences in the shared memory; a runaway argument is cut there.
MAX_OUTCOME_TOKENS = 80


@tool(FINISH_TOOL, response_format="content_and_artifact")
def finish_task(outcome: str) -> tuple[str, dict[str, str]]:
    """Mark the current task as completed, once the user's goal has been reached.

    Args:
        outcome: What was achieved, in one or two sentences.

    """
    text = truncate_to_tokens(" ".join(str(outcome).split()), MAX_OUTCOME_TOKENS)
    return "Task marked as completed.", {"op": "finish", "outcome": text}


def finished_outcome(messages: Sequence[BaseMessage]) -> str | None:
    """The outcome of the last `finish_task` call among these messages, if any."""
    outcome = None
    for m in messages:
        if isinstance(m, ToolMessage) and m.name == FINISH_TOOL:
            artifact = m.artifact
            if isinstance(artifact, dict) and artifact.get("op") == "finish":
                outcome = str(artifact.get("outcome") or "").strip() or "completed"
    return outcome


__all__ = ["FINISH_TOOL", "finish_task", "finished_outcome"]
