"""After "forget me", nothing of the user is left anywhere the project controls.

The real `langgraph dev` server with auth on, real Postgres and a Chroma server. A user talks in
two threads with unique strings; then they are forgotten, through the CLI (another process,
while the server runs) or through `POST /memory/forget`. Afterwards: the server answers 404 for
their threads and finds none in a search; after VACUUM, no column of any table in any schema
of the database holds a unique string; neither do the Chroma server's files (sqlite with its
write-ahead log, segment files) nor, once the server has written its registry to disk, the
server's own files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from typing import Any

import asyncpg
import httpx
import pytest
from langgraph_sdk import get_client

from memory.types import Scope
from tests.integration.test_forget import db_hits_conn
from tests.support.chroma_server import ChromaServer
from tests.support.langgraph_server import LangGraphServer
from tests.support.ports import REPO_ROOT
from tests.support.secured import bearer, files_holding
from tests.support.stub_llm import StubLLM

pytestmark = pytest.mark.e2e


def _headers(scope: Scope) -> dict[str, str]:
    return bearer(scope)


def _statements(tag: str) -> list[str]:
    return [
        f"I prefer green tea from the Zanthor{tag} estate.",
        f"My sister's name is Velmira{tag}.",
        f"We decided to host the offsite in Quillbrook{tag}.",
        f"Always call me Captain Orvex{tag}.",
    ]


async def _talk(server: LangGraphServer, who: Scope, tag: str) -> list[str]:
    client = get_client(url=server.url, headers=_headers(who))
    threads = []
    statements = _statements(tag)
    for half in (statements[:2], statements[2:]):
        thread = str((await client.threads.create())["thread_id"])
        threads.append(thread)
        for text in half:
            turn: Any = {"messages": [{"role": "user", "content": text}]}
            await client.runs.wait(thread, "agent", input=turn)
    return threads


def _needles(who: Scope, tag: str) -> list[str]:
    words = ["Zanthor", "Velmira", "Quillbrook", "Orvex"]
    return [f"{w}{tag}" for w in words] + [who.user_id]


async def _db_hits(url: str, needles: list[str]) -> list[str]:
    conn = await asyncpg.connect(url)
    try:
        # Every table of every schema, freshly vacuumed: dead rows would not show in a query
        # anyway; this also proves the space they held is free.
        await conn.execute("VACUUM")
        return await db_hits_conn(conn, needles)
    finally:
        await conn.close()


async def _served(server: LangGraphServer, who: Scope, threads: list[str]) -> list[str]:
    """What of the user's threads the server still serves (expected: nothing)."""
    seen = []
    async with httpx.AsyncClient(base_url=server.url, headers=_headers(who), timeout=60) as http:
        for thread in threads:
            for path in (f"/threads/{thread}", f"/threads/{thread}/state"):
                answer = await http.get(path)
                if answer.status_code != 404:
                    seen.append(f"{path}: {answer.status_code}")
        found = (await http.post("/threads/search", json={"limit": 100})).json()
        seen += [f"search: {t['thread_id']}" for t in found]
    return seen


def _cli_forget(pg_db_url: str, secured_server: LangGraphServer, who: Scope) -> dict[str, Any]:
    env = {**os.environ, **secured_server.env}
    env["DATABASE_URL"] = pg_db_url
    out = subprocess.run(
        [sys.executable, "-m", "agent.cli", "forget", "--tenant", who.tenant_id,
         "--user", who.user_id, "--yes", "--json"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    receipt: dict[str, Any] = json.loads(out.stdout)
    return receipt


@pytest.mark.parametrize("entry_point", ["cli", "http"])
async def test_forget_leaves_nothing_the_project_controls(
    secured_server: LangGraphServer,
    pg_db_url: str,
    _stub_session: StubLLM,
    _chroma_session: ChromaServer,
    entry_point: str,
) -> None:
    _stub_session.reset()
    tag = uuid.uuid4().hex[:8]
    who, bystander = Scope("acme", f"uma-{tag}"), Scope("acme", f"ned-{tag}")
    threads = await _talk(secured_server, who, tag)
    other = uuid.uuid4().hex[:8]
    await _talk(secured_server, bystander, other)
    needles = _needles(who, tag)
    assert await _db_hits(pg_db_url, needles)  # the user's data is there before
    # Chroma's files hold the user's entries (the receipt counts them) but neither the user's
    # words nor id: an entry's owner is a keyed hash.
    assert files_holding(_chroma_session.path, needles) == []
    assert len(await _served(secured_server, who, threads)) == 2 * 2 + 2

    if entry_point == "cli":
        receipt = _cli_forget(pg_db_url, secured_server, who)
        assert receipt["pending"] == ["server_thread"]  # the server's registry: next request
    else:
        async with httpx.AsyncClient(base_url=secured_server.url, timeout=120) as http:
            answer = await http.post(
                "/memory/forget", json={"confirm": True}, headers=_headers(who)
            )
        assert answer.status_code == 200, answer.text
        receipt = answer.json()
        assert receipt["pending"] == [] and receipt["server_threads_deleted"] == 2
    assert receipt["counts"]["postgres.memories"] >= 4 and receipt["counts"]["chroma"] >= 4
    assert receipt["chroma_log_blanked"] >= 4
    assert any("write-ahead log" in line for line in receipt["unreachable"])
    # The server's store may have compacted within the interval: then the pass is deferred.
    assert "memories" in receipt["vacuumed"] or receipt["compaction"] == "deferred"

    assert await _served(secured_server, who, threads) == []
    assert await _db_hits(pg_db_url, needles) == []
    assert files_holding(_chroma_session.path, needles) == []
    # The bystander keeps everything.
    assert await _db_hits(pg_db_url, _needles(bystander, other))
    # The server writes its registry to disk when it stops: nothing of the user in it.
    secured_server.restart()
    assert files_holding(secured_server.workdir, needles[:-1]) == []
