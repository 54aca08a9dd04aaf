"""The text a turn's recall searches with: the newest user message, and the task's goal."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage

from agent.state import State
from memory.multimodal import text_parts
from memory.working.task_state import TaskState

# The embedding model reads 256 tokens (~1,000 characters); the lexical side gains nothing from
# more, and tokenising a 64,000-character message on the event loop stalls every other request.
RECALL_QUERY_CHARS = 2_000


def latest_human(messages: Sequence[BaseMessage]) -> HumanMessage | None:
    """The newest human message of the thread."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return message
    return None


def recall_query(message: HumanMessage | None, task: TaskState | None) -> str:
    """What recall searches for, given the user's message and the task state."""
    text = text_parts(message.content)[:RECALL_QUERY_CHARS] if message is not None else ""
    goal = task["goal"] if task else None
    # The task goal keeps recall on topic when the latest turn is terse ("and the second one?").
    return f"{text}\n{goal}" if goal and goal not in text else text


def query_of(state: State) -> str:
    """The recall query of a turn's state."""
    return recall_query(latest_human(list(state["messages"])), state.get("task"))
