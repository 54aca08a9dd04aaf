"""The agent's tools: one `TOOLS` list, run by the graph's `tools` node (a `ToolNode`).

To give the agent a tool, append it to `TOOLS`: `respond` binds the list to the model and the
`tools` node executes the calls, so each call shows up as its own step in Studio. Tool output is
untrusted text and can be long: it is truncated to the run's `tool_output_max_tokens` before it
re-enters the context.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from agent.context import Context
from memory.working.scratchpad_tools import make_scratchpad_tools
from memory.working.task_tools import finish_task
from memory.working.tool_output import truncate_tool_output

TOOLS: list[BaseTool] = [*make_scratchpad_tools(), finish_task]
"""Every tool the model may call. Add yours here."""


async def _truncate_output(
    request: ToolCallRequest,
    execute: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
) -> ToolMessage | Command[Any]:
    result = await execute(request)
    if isinstance(result, ToolMessage):
        context = request.runtime.context if request.runtime is not None else None
        limit = context.tool_output_max_tokens if isinstance(context, Context) else 800
        result.content = truncate_tool_output(result.content, max_tokens=limit)["text"]
    return result


def make_tool_node(tools: list[BaseTool] | None = None) -> ToolNode:
    """The node that executes the model's tool calls (errors go back to the model as text)."""
    return ToolNode(
        TOOLS if tools is None else tools,
        name="tools",
        handle_tool_errors=True,
        awrap_tool_call=_truncate_output,
    )
