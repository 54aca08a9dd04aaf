"""Fixtures of the memory inspector's end-to-end tests (each test module gets its own server)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import LangGraphFactory
from tests.e2e.inspector_world import World, build_world, server_env
from tests.support.chroma_server import ChromaServer
from tests.support.langgraph_server import LangGraphServer


@pytest.fixture(scope="module")
def inspector_world(
    pg_db_url: str,
    _chroma_session: ChromaServer,
    embedding_model_dir: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> World:
    """Alice's, Bob's, Carol's and Dave's memories and a consolidation run, in this module's DB."""
    return build_world(pg_db_url, _chroma_session.url, embedding_model_dir,
                       tmp_path_factory.mktemp("inspector-client"))  # fmt: skip


@pytest.fixture(scope="module")
def inspector_server(
    inspector_world: World,
    langgraph_factory: LangGraphFactory,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[LangGraphServer]:
    """`langgraph dev` with auth on, serving the repo's langgraph.json on those stores."""
    data_dir = tmp_path_factory.mktemp("inspector-server")
    yield langgraph_factory(env=server_env(inspector_world, data_dir))
