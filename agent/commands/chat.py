"""`memory-agent chat`: the agent in a terminal, on the server's checkpointer and stores."""

from __future__ import annotations

import argparse
import asyncio
import sys
import uuid
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.types import Command

from agent.checkpointer import open_checkpointer
from agent.context import Context
from agent.graph import build_graph
from agent.model import load_chat_model
from agent.resources import close_stores


def _ask(prompt: str) -> str | None:
    try:
        return input(prompt)
    except EOFError:
        return None


def _answer_interrupt(payload: Any) -> Any:
    """Show an interrupt (brake or approval) and read the human's answer."""
    value = payload.value if hasattr(payload, "value") else payload
    if isinstance(value, dict) and value.get("type") == "memory_approval":
        for m in value.get("memories", []):
            print(f"  needs approval: {m['content']!r} ({m['reason']})")
        return "approve" if (_ask("approve? [y/N] ") or "").lower().startswith("y") else "reject"
    print(f"  brake: {value.get('reason') if isinstance(value, dict) else value}")
    go_on = (_ask("continue the task? [y/N] ") or "").lower().startswith("y")
    return "continue" if go_on else "stop"


async def chat(args: argparse.Namespace) -> int:
    """Read lines from stdin and answer them until EOF or /quit."""
    ctx = Context(tenant_id=args.tenant, user_id=args.user)
    load_chat_model(ctx.model)  # fail now, clearly, rather than after the first message
    thread = args.thread or uuid.uuid4().hex
    print(f"thread {thread} (continue it with --thread {thread}); /quit to leave")
    try:
        async with open_checkpointer() as saver:
            graph = build_graph().compile(checkpointer=saver)
            config: dict[str, Any] = {"configurable": {"thread_id": thread}}
            while (line := await asyncio.to_thread(_ask, "you> ")) is not None:
                if line.strip() in ("/quit", "/exit"):
                    break
                payload: Any = {"messages": [("user", line)]}
                while True:
                    out = await graph.ainvoke(payload, config, context=ctx)  # type: ignore[call-overload]
                    pending = out.get("__interrupt__")
                    if not pending:
                        break
                    payload = Command(resume=_answer_interrupt(pending[0]))
                last = out["messages"][-1] if out.get("messages") else None
                if isinstance(last, AIMessage):
                    print(f"agent> {last.content}")
    finally:
        await close_stores()
    sys.stdout.flush()
    return 0
