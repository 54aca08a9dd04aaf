"""The custom HTTP app's routes as the LangGraph server sees them."""

from __future__ import annotations

import pytest
import yaml
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.routing import BaseRoute, Route

from agent.http_app import app
from agent.http_auth import path_id


def _routes(routes: list[BaseRoute]) -> list[Route]:
    found: list[Route] = []
    for route in routes:
        if isinstance(route, Route):
            found.append(route)
        found += _routes(list(getattr(route, "routes", [])))
    return found


def test_every_route_docstring_parses_as_the_server_schema_expects() -> None:
    # The server builds its OpenAPI document with Starlette's SchemaGenerator, which YAML-loads
    # the part of each endpoint's docstring after "---" (the whole docstring when there is none);
    # a docstring YAML cannot read prints a traceback at every start.
    routes = _routes(list(app.routes))
    assert len(routes) > 10
    for route in routes:
        doc = route.endpoint.__doc__ or ""
        yaml.safe_load(doc.split("---")[-1])  # raises on a docstring the server cannot read


@pytest.mark.parametrize(
    "bad", ["abc\n", "abc\x00def", "", "a" * 65, "../etc", "a b", "\u200babc", "abc\r"]
)
def test_path_ids_are_matched_whole(bad: str) -> None:
    request = Request({"type": "http", "path_params": {"memory_id": bad}})
    with pytest.raises(HTTPException) as refused:
        path_id(request)
    assert refused.value.status_code == 404


def test_a_plain_id_passes() -> None:
    request = Request({"type": "http", "path_params": {"run_id": "run_2026-12-01_ab12"}})
    assert path_id(request, "run_id") == "run_2026-12-01_ab12"
