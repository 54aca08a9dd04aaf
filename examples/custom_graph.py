"""Your own `StateGraph` with governed memory: recall before the model, gate-and-store after.

    MEMORY_AGENT_MODEL=openai:gpt-4o-mini uv run python -m examples.custom_graph alice "I'm vegan."

The user id comes from the run's context, set by your program (or your server's auth), never
from anything a model wrote.
"""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict

from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.runtime import Runtime

from memory import GovernedMemory, cite


class State(TypedDict):
    """The conversation and what recall found for its last message."""

    messages: Annotated[list[AnyMessage], add_messages]
    memories: str


@dataclass
class Context:
    """Per run: whose memory (set by your program or your server's auth)."""

    user_id: str


def build(memory: GovernedMemory, model: BaseChatModel) -> Any:
    """The graph: recall, then respond, then remember, over `memory`."""

    async def recall(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        hits = await memory.recall(runtime.context.user_id, state["messages"][-1].text)
        return {"memories": cite(hits)}

    async def respond(state: State) -> dict[str, Any]:
        known = state["memories"] or "(nothing relevant)"
        system = SystemMessage(f"What you remember about the user (cite as given):\n{known}")
        return {"messages": [await model.ainvoke([system, *state["messages"]])]}

    async def remember(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        asked = next(m for m in reversed(state["messages"]) if isinstance(m, HumanMessage))
        reply = state["messages"][-1]
        said = reply.text if isinstance(reply, AIMessage) else None
        await memory.remember_turn(runtime.context.user_id, asked.text, reply=said)
        return {}

    graph = StateGraph(State, context_schema=Context)
    graph.add_node("recall", recall)
    graph.add_node("respond", respond)
    graph.add_node("remember", remember)
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "respond")
    graph.add_edge("respond", "remember")
    graph.add_edge("remember", END)
    return graph.compile()


async def main(user: str, text: str) -> None:
    """One turn as `user` with the model `MEMORY_AGENT_MODEL` names."""
    async with GovernedMemory.open() as memory:
        agent = build(memory, init_chat_model(os.environ["MEMORY_AGENT_MODEL"]))
        out = await agent.ainvoke({"messages": [("user", text)]}, context=Context(user))
        print(out["messages"][-1].text)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:3]))
