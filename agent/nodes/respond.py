"""respond: the model call, with the scratchpad tools.

Tool outputs are truncated before they re-enter the context (seed 000 §2.3), and every
call counts toward the task's brakes.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime

from agent.context import Context
from agent.model import load_chat_model
from agent.state import State
from memory.working.scratchpad import apply_op
from memory.working.scratchpad_tools import make_scratchpad_tools, ops_from_messages
from memory.working.task_state import new_task_state, record_step
from memory.working.tokens import count_messages_tokens
from memory.working.tool_output import truncate_tool_output

MAX_TOOL_ROUNDS = 3


def _usage(message: AIMessage, prompt: list[BaseMessage]) -> int:
    usage = message.usage_metadata
    total = int(usage["total_tokens"]) if usage else 0
    return total or count_messages_tokens([*prompt, message])


async def _run_tool(
    tools: dict[str, BaseTool], call: dict[str, Any], max_tokens: int
) -> ToolMessage:
    tool = tools.get(call["name"])
    if tool is None:
        return ToolMessage(
            f"unknown tool {call['name']!r}", tool_call_id=call["id"], status="error"
        )
    result = await tool.ainvoke({**call, "type": "tool_call"})
    if isinstance(result, ToolMessage):
        view = truncate_tool_output(result.content, max_tokens=max_tokens)
        result.content = view["text"]
        return result
    view = truncate_tool_output(result, max_tokens=max_tokens)
    return ToolMessage(view["text"], tool_call_id=call["id"], name=call["name"])


async def respond(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Call the model on the composed prompt; run scratchpad tool calls; return the answer."""
    ctx = runtime.context or Context()
    model = load_chat_model(ctx.model)
    degraded = bool(state.get("brake"))
    tools = {} if degraded else {t.name: t for t in make_scratchpad_tools()}
    bound = model.bind_tools(list(tools.values())) if tools else model
    prompt: list[BaseMessage] = list(state.get("prompt") or [])
    task = state.get("task") or new_task_state()
    produced: list[BaseMessage] = []
    for _ in range(MAX_TOOL_ROUNDS + 1):
        answer = await bound.ainvoke(prompt + produced)
        if not isinstance(answer, AIMessage):
            answer = AIMessage(content=str(answer.content))
        task = record_step(task, tokens=_usage(answer, prompt + produced))
        produced.append(answer)
        if not answer.tool_calls:
            break
        for call in answer.tool_calls:
            produced.append(await _run_tool(tools, dict(call), ctx.tool_output_max_tokens))
    pad = list(state.get("scratchpad") or [])
    for op in ops_from_messages(produced):
        pad = apply_op(pad, op)
    return {"messages": produced, "task": task, "scratchpad": pad}
