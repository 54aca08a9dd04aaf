"""The memory agent: graphs, nodes, CLI and server glue; composes memory/ and prompts/.

`langgraph.json` names the graphs by path (`agent/graph.py:graph`, the consolidation graph in
`agent/consolidate_graph.py`). The names below are loaded on first use, so importing one
submodule (the CLI, a node) does not compile the graphs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.exports import lazy_exports

if TYPE_CHECKING:
    from agent.context import Context
    from agent.graph import build_graph, graph
    from agent.state import InputState, State

_WHERE = {
    "Context": ".context",
    "InputState": ".state",
    "State": ".state",
    "build_graph": ".graph",
    "graph": ".graph",
}


__getattr__ = lazy_exports(__name__, _WHERE)


__all__ = ["Context", "InputState", "State", "build_graph", "graph"]
