"""What the security tests share: a server with auth on over a Chroma server, tokens, file scans."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

from agent.auth_tokens import mint_token
from memory.types import Scope
from tests.support.chroma_server import ChromaServer
from tests.support.langgraph_server import LangGraphServer, agent_env
from tests.support.stub_llm import StubLLM

SECURED_SECRET = "secured-" + uuid.uuid4().hex
"""The token secret of the `secured_server` fixture."""


def start_secured_server(
    start: Callable[..., LangGraphServer],
    database_url: str,
    data_dir: Path,
    stub: StubLLM,
    chroma: ChromaServer,
    secret: str,
    *,
    n_jobs: int | None = None,
    **extra: str,
) -> LangGraphServer:
    """`langgraph dev` with token auth, the stub model, `database_url` and the Chroma server
    (whose folder it may purge: it runs on this host); `extra` env, e.g. small limits."""
    env = agent_env(
        database_url,
        data_dir,
        stub.base_url,
        MEMORY_AUTH_SECRET=secret,
        CHROMA_URL=chroma.url,
        MEMORY_CHROMA_SERVER_PATH=str(chroma.path),
        **extra,
    )
    return start(env=env, n_jobs=n_jobs)


def bearer(scope: Scope, secret: str = SECURED_SECRET) -> dict[str, str]:
    """The Authorization header of a fresh token for `scope`."""
    return {"Authorization": f"Bearer {mint_token(scope, secret)}"}


def files_holding(root: Path, needles: list[str]) -> list[str]:
    """`path: needle` for every file under `root` whose bytes contain a needle (UTF-8)."""
    hits: list[str] = []
    encoded = [(n, n.encode()) for n in needles]
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            hits += [f"{path}: {n}" for n, raw in encoded if raw in data]
    return hits


__all__ = ["SECURED_SECRET", "bearer", "files_holding", "start_secured_server"]
