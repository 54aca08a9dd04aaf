"""A prebuilt `create_agent` whose memory is the governed store, through LangMem's tools.

    MEMORY_AGENT_MODEL=openai:gpt-4o-mini uv run python -m examples.prebuilt_agent alice "Hi"

The model decides when to remember or search; every write still goes through the gate,
redaction and conflicts, and the namespace's user comes from the run's config, which your
program (or your server's auth) sets, never from the model's tool arguments.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from langchain.agents import create_agent
from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel
from langmem import create_manage_memory_tool, create_search_memory_tool

from memory import GovernedMemory, GovernedStore


def build(memory: GovernedMemory, model: BaseChatModel) -> Any:
    """A `create_agent` graph with LangMem's manage and search tools over `memory`."""
    namespace = (memory.tenant, "{user_id}", "memories")  # filled from config["configurable"]
    tools = [create_manage_memory_tool(namespace), create_search_memory_tool(namespace)]
    store = GovernedStore(memory.store, require_approval=False)
    return create_agent(model, tools=tools, store=store)


async def ask(agent: Any, user: str, text: str, thread: str = "example") -> str:
    """One turn as `user`; returns the agent's reply."""
    config = {"configurable": {"thread_id": thread, "user_id": user}}
    out = await agent.ainvoke({"messages": [("user", text)]}, config)
    return str(out["messages"][-1].text)


async def main(user: str, text: str) -> None:
    """One turn as `user` with the model `MEMORY_AGENT_MODEL` names."""
    async with GovernedMemory.open() as memory:
        agent = build(memory, init_chat_model(os.environ["MEMORY_AGENT_MODEL"]))
        print(await ask(agent, user, text))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:3]))
