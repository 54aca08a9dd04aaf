"""Both exported graphs can describe themselves (what Studio and the schemas endpoint show)."""

from __future__ import annotations

import pytest

from agent.consolidate_graph import graph as consolidate_graph
from agent.graph import graph as agent_graph


@pytest.mark.parametrize("graph", [agent_graph, consolidate_graph], ids=["agent", "consolidate"])
def test_input_output_and_context_schemas_build(graph: object) -> None:
    # pydantic refuses typing.TypedDict anywhere in the state on Python < 3.12, and the server
    # then serves a null schema: every state type must come from typing_extensions.
    compiled = graph  # the module-level compiled graph, as langgraph.json exports it
    for build in ("get_input_jsonschema", "get_output_jsonschema", "get_context_jsonschema"):
        schema = getattr(compiled, build)()
        assert schema.get("properties") or schema.get("$defs"), build
