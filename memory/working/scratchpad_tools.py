"""LangChain tools through which the model edits its scratchpad.

The tools do not touch state (a tool has no safe handle on it): each returns a short reply for
the model and, as the ToolMessage `artifact`, a `ScratchpadOp` the graph applies with
`memory.working.scratchpad.apply_op` (see `ops_from_messages`).
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, tool

from memory.working.scratchpad import ScratchpadOp, clean_category, make_entry

WRITE_TOOL = "scratchpad_write"
CLEAR_TOOL = "scratchpad_clear"


@tool(WRITE_TOOL, response_format="content_and_artifact")
def scratchpad_write(content: str, category: str = "general") -> tuple[str, ScratchpadOp]:
    """Write a short note to your scratchpad (progress, intermediate results, to-dos).

    Args:
        content: The note, one or two sentences.
        category: A one-word label such as progress, result, todo or fact.

    """
    entry = make_entry(content, category)
    return f"Noted under [{entry['category']}].", ScratchpadOp(
        op="write", entry=entry, category=entry["category"]
    )


@tool(CLEAR_TOOL, response_format="content_and_artifact")
def scratchpad_clear(category: str | None = None) -> tuple[str, ScratchpadOp]:
    """Clear your scratchpad, or only the notes of one category.

    Args:
        category: The label to clear; leave empty to clear everything.

    """
    label = clean_category(category) if category else None
    reply = f"Cleared [{label}] notes." if label else "Cleared the scratchpad."
    return reply, ScratchpadOp(op="clear", entry=None, category=label)


def make_scratchpad_tools() -> list[BaseTool]:
    """The scratchpad tools to bind to the model."""
    return [scratchpad_write, scratchpad_clear]


def ops_from_messages(messages: Sequence[BaseMessage]) -> list[ScratchpadOp]:
    """The scratchpad operations carried by these tool results, in order."""
    ops: list[ScratchpadOp] = []
    for m in messages:
        if isinstance(m, ToolMessage) and m.name in (WRITE_TOOL, CLEAR_TOOL):
            artifact = m.artifact
            if isinstance(artifact, dict) and artifact.get("op") in ("write", "clear"):
                ops.append(
                    ScratchpadOp(
                        op=artifact["op"],
                        entry=artifact.get("entry"),
                        category=artifact.get("category"),
                    )
                )
    return ops
