"""The agent's nodes, one module each: perceive → recall → compose → respond → gate_and_store.

Loaded on first use, so importing one node does not import the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.exports import lazy_exports

if TYPE_CHECKING:
    from agent.nodes.approval import await_approval
    from agent.nodes.compose import compose
    from agent.nodes.gate_and_store import gate_and_store
    from agent.nodes.perceive import perceive
    from agent.nodes.recall import recall
    from agent.nodes.respond import respond, route_after_respond

_WHERE = {
    "await_approval": ".approval",
    "compose": ".compose",
    "gate_and_store": ".gate_and_store",
    "perceive": ".perceive",
    "recall": ".recall",
    "respond": ".respond",
    "route_after_respond": ".respond",
}


__getattr__ = lazy_exports(__name__, _WHERE)


__all__ = [
    "await_approval",
    "compose",
    "gate_and_store",
    "perceive",
    "recall",
    "respond",
    "route_after_respond",
]
