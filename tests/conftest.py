"""Shared fixtures: real Postgres / Chroma / langgraph dev started on demand, a stub LLM.

Every server fixture is lazy: a run of unit tests that use none of them starts nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.chroma_server import ChromaServer
from tests.support.langgraph_server import LangGraphServer
from tests.support.ports import PRIVACY_ENV, REPO_ROOT, model_dir
from tests.support.postgres import PostgresServer, start_postgres
from tests.support.secured import SECURED_SECRET, start_secured_server
from tests.support.stub_llm import StubLLM

if TYPE_CHECKING:
    from memory.storage.store import MemoryStore

# Tests choose their stores and model explicitly; a developer's shell must not leak a real
# database or provider into them.
_CLEARED_ENV = ("DATABASE_URL", "POSTGRES_URI", "CHROMA_URL", "OPENAI_BASE_URL",
                "OPENAI_API_KEY", "MEMORY_AGENT_MODEL")  # fmt: skip


@pytest.fixture(scope="session", autouse=True)
def _test_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Privacy env, the local embedding model, a throwaway MEMORY_DATA_DIR, no outside URLs."""
    with pytest.MonkeyPatch.context() as mp:
        for key, value in PRIVACY_ENV.items():
            mp.setenv(key, value)
        mp.setenv("MEMORY_EMBEDDING_MODEL_DIR", str(model_dir()))
        mp.setenv("MEMORY_DATA_DIR", str(tmp_path_factory.mktemp("memory-data")))
        for key in _CLEARED_ENV:
            mp.delenv(key, raising=False)
        yield


@pytest.fixture(scope="session")
def embedding_model_dir() -> Path:
    """The local all-MiniLM-L6-v2 ONNX model folder (fails loudly when it is missing)."""
    path = model_dir()
    assert (path / "onnx" / "model.onnx").exists(), f"embedding model missing at {path}"
    return path


@pytest.fixture
def tmp_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh data dir for embedded Chroma / pgserver, also set as MEMORY_DATA_DIR."""
    path = tmp_path / "data"
    path.mkdir()
    monkeypatch.setenv("MEMORY_DATA_DIR", str(path))
    return path


# --- Postgres -------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def _pg_session() -> Iterator[PostgresServer]:
    server = start_postgres()
    yield server
    server.destroy()


@pytest.fixture
def pg_server(_pg_session: PostgresServer) -> Iterator[PostgresServer]:
    """The session's Postgres; a test may `stop()` it, it is started again afterwards."""
    if not _pg_session.is_running():
        _pg_session.start()
    yield _pg_session
    if not _pg_session.is_running():
        _pg_session.start()


@pytest.fixture(scope="session")
def pg_url(_pg_session: PostgresServer) -> str:
    """URL of the session-wide `test` database (shared by every module)."""
    return _pg_session.url


@pytest.fixture(scope="module")
def pg_db_url(_pg_session: PostgresServer) -> Iterator[str]:
    """URL of a fresh, empty database for this test module (dropped afterwards)."""
    url = _pg_session.create_database()
    yield url
    if _pg_session.is_running():
        _pg_session.drop_database(url.rsplit("/", 1)[-1])


# --- Chroma ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def _chroma_session() -> Iterator[ChromaServer]:
    server = ChromaServer()
    server.start()
    yield server
    server.destroy()


@pytest.fixture
def chroma_server(_chroma_session: ChromaServer) -> Iterator[ChromaServer]:
    """The session's `chroma run`; a test may `stop()` it, it is started again afterwards."""
    _chroma_session.start()  # no-op when up
    yield _chroma_session
    _chroma_session.start()


# --- LLM and langgraph dev ------------------------------------------------------------------


@pytest.fixture(scope="session")
def _stub_session() -> Iterator[StubLLM]:
    with StubLLM() as stub:
        yield stub


@pytest.fixture
def stub_llm(_stub_session: StubLLM, monkeypatch: pytest.MonkeyPatch) -> StubLLM:
    """The in-process stub, reset, with OPENAI_BASE_URL/OPENAI_API_KEY/MEMORY_AGENT_MODEL set."""
    _stub_session.reset()
    monkeypatch.setenv("OPENAI_BASE_URL", _stub_session.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "stub")
    monkeypatch.setenv("MEMORY_AGENT_MODEL", "openai:stub-model")
    return _stub_session


LangGraphFactory = Callable[..., LangGraphServer]
NO_RATE_LIMITS = {
    "MEMORY_RATE_LIMIT_RUNS_PER_MINUTE": "off",
    "MEMORY_RATE_LIMIT_THREADS_PER_MINUTE": "off",
    "MEMORY_RATE_LIMIT_WRITES_PER_MINUTE": "off",
    "MEMORY_RATE_LIMIT_SEARCHES_PER_MINUTE": "off",
}


@pytest.fixture(scope="module")
def langgraph_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LangGraphFactory]:
    """`start(config=<repo>/langgraph.json, env={...}, n_jobs=None)` -> a running server.

    Servers are stopped when the module ends. Pass DATABASE_URL, CHROMA_URL, OPENAI_BASE_URL
    (a stub's `base_url`), OPENAI_API_KEY and MEMORY_AGENT_MODEL in `env`.
    """
    servers: list[LangGraphServer] = []

    def start(
        config: Path = REPO_ROOT / "langgraph.json",
        env: dict[str, str] | None = None,
        n_jobs: int | None = None,
    ) -> LangGraphServer:
        workdir = tmp_path_factory.mktemp("langgraph")  # keeps the log for a failed run
        # A test drives one user faster than any person: per-user rates are off unless the
        # test sets them (tests/security/test_limits.py does); quotas keep their defaults.
        env = {**NO_RATE_LIMITS, **(env or {})}
        server = LangGraphServer(config, env, workdir=workdir, n_jobs=n_jobs)
        servers.append(server)
        server.start()
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture(scope="module")
def secured_server(
    langgraph_factory: LangGraphFactory,
    pg_db_url: str,
    tmp_path_factory: pytest.TempPathFactory,
    _stub_session: StubLLM,
    _chroma_session: ChromaServer,
) -> LangGraphServer:
    """This module's `langgraph dev` with token auth (`SECURED_SECRET`), the stub model, the
    module's database and the Chroma server (tokens: `tests.support.secured.bearer`)."""
    data_dir = tmp_path_factory.mktemp("secured-data")
    return start_secured_server(
        langgraph_factory, pg_db_url, data_dir, _stub_session, _chroma_session, SECURED_SECRET
    )


@pytest.fixture
async def clean_store(
    pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path
) -> AsyncIterator[MemoryStore]:
    """A store on this module's database with embedded Chroma, every table emptied first."""
    from memory.settings import Settings
    from memory.storage.store import open_store
    from tests.support.memory_stores import truncate

    settings = Settings(
        database_url=pg_db_url, data_dir=tmp_data_dir, embedding_model_dir=embedding_model_dir
    )
    async with open_store(settings) as store:
        await truncate(store)
        yield store
