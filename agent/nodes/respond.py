"""respond: the model call on the composed prompt, with the tools of `agent.tools.TOOLS`.

Tool calls are executed by the graph's `tools` node (a `ToolNode`), which routes back here;
this node sees the composed prompt plus this turn's tool round trips. After `MAX_TOOL_ROUNDS`
rounds, or when a brake has degraded the task, the model is called without tools. Every call
counts toward the task's token brake. With no model configured (or `memory-only`), the
built-in memory-only responder answers from what recall returned.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, messages_from_dict
from langgraph.runtime import Runtime

from agent.context import Context
from agent.input_guard import redacted_output
from agent.memory_only import MemoryOnlyChatModel
from agent.model import is_memory_only, load_chat_model
from agent.state import State
from agent.tools import TOOLS
from memory.working.scratchpad import apply_op
from memory.working.scratchpad_tools import ops_from_messages
from memory.working.task_state import new_task_state, record_step
from memory.working.tokens import count_messages_tokens

MAX_TOOL_ROUNDS = 3
# Set in the `response_metadata` of the reply that stands in for a model that did not answer.
MODEL_ERROR = "model_error"

log = logging.getLogger(__name__)


def _model_failed(exc: Exception) -> AIMessage:
    """The reply when the model call fails: says so in one line; the turn goes on to the gate.

    A model that is down, refuses the key or times out must not cost the user what they just
    said: the graph still reaches `gate_and_store`. Only the error's type is shown and kept
    (the reply lands in the checkpoint); a provider's message may quote request details.
    """
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    log.warning("the chat model did not answer: %s%s", name, f" ({status})" if status else "")
    text = (
        f"[the chat model did not answer ({name}{f', HTTP {status}' if status else ''}); "
        "your message was still considered for memory. Try again when the model is back.]"
    )
    return AIMessage(content=text, response_metadata={MODEL_ERROR: name})


def _usage(message: AIMessage, prompt: list[BaseMessage]) -> int:
    usage = message.usage_metadata
    total = int(usage["total_tokens"]) if usage else 0
    return total or count_messages_tokens([*prompt, message])


def this_turn(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The messages after the latest user message: this turn's tool round trips so far."""
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], HumanMessage):
            return list(messages[i + 1 :])
    return []


def _tool_rounds(turn: Sequence[BaseMessage]) -> int:
    return sum(1 for m in turn if isinstance(m, AIMessage) and m.tool_calls)


def route_after_respond(state: State) -> Literal["tools", "gate_and_store"]:
    """To the `tools` node while the model asks for tools, else on to the memory gate."""
    messages = state["messages"]
    last = messages[-1] if messages else None
    if isinstance(last, AIMessage) and last.tool_calls:
        return "tools"
    return "gate_and_store"


async def respond(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Call the model on the composed prompt plus this turn's tool results."""
    ctx = runtime.context or Context()
    turn = this_turn(state["messages"])
    rounds = _tool_rounds(turn)
    tools_allowed = not state.get("brake") and rounds < MAX_TOOL_ROUNDS and bool(TOOLS)
    if is_memory_only(ctx.model):
        bound: Any = MemoryOnlyChatModel().with_recall(
            state.get("evidence") or [], state.get("preferences") or []
        )
    else:
        model = load_chat_model(ctx.model)
        bound = model.bind_tools(TOOLS) if tools_allowed else model
    prompt = messages_from_dict(list(state.get("prompt") or [])) + turn
    try:
        answer = await bound.ainvoke(prompt)
    except Exception as exc:  # any provider's outage, auth or timeout error; see _model_failed
        answer = _model_failed(exc)
    if not isinstance(answer, AIMessage):
        answer = AIMessage(content=str(answer.content))
    if answer.tool_calls and not tools_allowed:
        # Tools were not offered; a call anyway would leave an unanswered tool call in history.
        answer = AIMessage(content=answer.content, id=answer.id)
    # Before it enters the state the server records (pattern work on text: off the loop).
    answer = await asyncio.to_thread(redacted_output, answer)
    task = record_step(state.get("task") or new_task_state(), tokens=_usage(answer, prompt))
    update: dict[str, Any] = {"messages": [answer], "task": task}
    if not answer.tool_calls:
        pad = list(state.get("scratchpad") or [])
        for op in ops_from_messages(turn):
            pad = apply_op(pad, op)
        update["scratchpad"] = pad
    return update
