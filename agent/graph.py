"""The memory agent graph: perceive → recall → compose → respond ⇄ tools → gate_and_store.

`graph` is compiled without a checkpointer or store: `langgraph dev` / LangGraph Platform supply
the Postgres checkpointer named in `langgraph.json`. Tests and the CLI call `build_graph()` and
compile it with their own.
"""

from __future__ import annotations

from typing import Literal

from langgraph.graph import END, START, StateGraph

from agent.context import Context
from agent.nodes.approval import await_approval
from agent.nodes.compose import compose
from agent.nodes.gate_and_store import gate_and_store
from agent.nodes.perceive import perceive
from agent.nodes.recall import recall
from agent.nodes.respond import respond, route_after_respond
from agent.resources import store_errors_are_clear
from agent.run_context import governed
from agent.state import InputState, State
from agent.tools import make_tool_node
from memory.settings import apply_privacy_defaults

apply_privacy_defaults()


def _after_perceive(state: State) -> Literal["recall", "__end__"]:
    # A refused input (empty) or a task stopped at a brake ends the turn without a model call.
    return "__end__" if state.get("rejected") else "recall"


def _after_store(state: State) -> Literal["await_approval", "__end__"]:
    return "await_approval" if state.get("pending_approval") else "__end__"


def build_graph() -> StateGraph[State, Context, InputState, State]:
    """The uncompiled graph, for callers that compile it with their own checkpointer."""
    builder = StateGraph(State, context_schema=Context, input_schema=InputState)
    # Every node that reads the context reads the operator's fields as the operator set them
    # (`governed`); the tool node reads only a user field. The nodes that read or write the
    # memory store report an outage as such.
    builder.add_node("perceive", governed(perceive))
    builder.add_node("recall", store_errors_are_clear(governed(recall)))
    builder.add_node("compose", governed(compose))
    builder.add_node("respond", governed(respond))
    builder.add_node("tools", make_tool_node())
    builder.add_node("gate_and_store", store_errors_are_clear(governed(gate_and_store)))
    builder.add_node("await_approval", store_errors_are_clear(governed(await_approval)))
    builder.add_edge(START, "perceive")
    builder.add_conditional_edges("perceive", _after_perceive)
    builder.add_edge("recall", "compose")
    builder.add_edge("compose", "respond")
    builder.add_conditional_edges("respond", route_after_respond)
    builder.add_edge("tools", "respond")
    builder.add_conditional_edges("gate_and_store", _after_store)
    builder.add_edge("await_approval", END)
    return builder


graph = build_graph().compile(name="memory-agent")
