"""The index is never lost silently: one process per embedded Chroma, and a reindex that reads
Chroma back and says what it found.

Real Postgres, real Chroma (embedded in two real processes; a `chroma run` server wiped under a
running store), the real embedding model, the CLI as a subprocess and the admin route through
`langgraph dev` with auth on.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import chromadb
import httpx
import pytest
from chromadb.config import Settings as ChromaSettings

from agent.auth_tokens import PERMISSION_ADMIN, mint_token
from memory.settings import Settings
from memory.storage.forget import forget_user
from memory.storage.index_check import reindex_checked
from memory.storage.store import MemoryStore, open_store
from memory.storage.vector import VectorIndex, shard_of
from memory.types import MemoryRecord, NewMemory, Scope
from tests.support.chroma_server import ChromaServer
from tests.support.cli import run_cli
from tests.support.langgraph_server import LangGraphServer
from tests.support.memory_stores import server_settings, store_settings, truncate
from tests.support.ports import REPO_ROOT
from tests.support.secured import SECURED_SECRET, bearer

TAG = uuid.uuid4().hex[:8]
ANA, BEN = Scope("acme", f"ana{TAG}"), Scope("globex", f"ben{TAG}")

# A process that opens the embedded store and keeps it open until its stdin closes.
_HOLDER = """
import asyncio, sys
from memory.storage.store import open_store

async def main() -> None:
    async with open_store():
        print("open", flush=True)
        await asyncio.to_thread(sys.stdin.read)

asyncio.run(main())
"""


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(env, *args, timeout=180)


async def _rows(store: MemoryStore) -> list[tuple[str, bool]]:
    async with store.pool.acquire() as conn:
        rows = await conn.fetch("SELECT id, indexed_at IS NOT NULL AS marked FROM memories")
    return [(r["id"], r["marked"]) for r in rows]


async def _kept(store: MemoryStore) -> list[MemoryRecord]:
    out: list[MemoryRecord] = []
    for scope in (ANA, BEN):
        out += await store.list_memories(scope)
    return out


async def _marked_but_not_held(store: MemoryStore) -> list[str]:
    """Rows Postgres says are indexed that Chroma does not hold (what must never be)."""
    records = await _kept(store)
    marked = {i for i, m in await _rows(store) if m}
    held = await store.index.held(records)
    return sorted(r.id for r in records if r.id in marked and r.id not in held)


async def _write(store: MemoryStore) -> list[MemoryRecord]:
    texts = {ANA: ["I keep bees on the roof", "My sister lives in Porto", "I cycle to work"],
             BEN: ["I play the oboe", "My flat has a red door"]}  # fmt: skip
    out: list[MemoryRecord] = []
    for scope, items in texts.items():
        out += await store.write_many(scope, [NewMemory(t) for t in items])
    return out


# --- one process per embedded Chroma --------------------------------------------------------


@pytest.fixture
def embedded_env(pg_db_url: str, tmp_data_dir: Path) -> dict[str, str]:
    return {**os.environ, "DATABASE_URL": pg_db_url, "MEMORY_DATA_DIR": str(tmp_data_dir)}


@pytest.fixture
def holder(embedded_env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    """A second real process with the embedded store open (a running server, a chat)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER], cwd=REPO_ROOT, env=embedded_env, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.strip() == "open", proc.communicate(timeout=60)[1][-3000:]
    yield proc
    proc.kill()
    proc.wait(timeout=30)


@pytest.mark.parametrize(
    "command",
    [
        ["remember", "My locker code word is walrus", "--user", "u1"],
        ["reindex"],
        ["recall", "locker", "--user", "u1"],
        ["forget", "--user", "u1", "--yes"],
    ],
    ids=["remember", "reindex", "recall", "forget"],
)
def test_a_second_process_on_embedded_chroma_is_refused_naming_chroma_url(
    holder: subprocess.Popen[str], embedded_env: dict[str, str], command: list[str]
) -> None:
    out = _cli(embedded_env, *command)
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr[-3000:])
    assert "CHROMA_URL" in out.stderr and str(holder.pid) in out.stderr
    assert "Traceback" not in out.stderr


def test_the_folder_cannot_be_reached_under_another_name(
    holder: subprocess.Popen[str], embedded_env: dict[str, str], tmp_path: Path
) -> None:
    data = Path(embedded_env["MEMORY_DATA_DIR"])
    alias = tmp_path / "alias"
    alias.symlink_to(data, target_is_directory=True)
    for spelling in (str(alias), f"{data}/./", f"{data}/../{data.name}"):
        env = {**embedded_env, "MEMORY_DATA_DIR": spelling}
        out = _cli(env, "remember", "My gym locker is 41", "--user", "u2")
        assert out.returncode == 2 and "CHROMA_URL" in out.stderr, (spelling, out.stderr[-2000:])


def test_the_lock_dies_with_its_process(
    holder: subprocess.Popen[str], embedded_env: dict[str, str]
) -> None:
    holder.kill()  # no clean-up runs: the OS releases the lock, nothing stale remains
    holder.wait(timeout=30)
    out = _cli(embedded_env, "remember", "My gym locker is 41", "--user", "u3")
    assert out.returncode == 0, out.stderr[-3000:]


async def test_stores_of_one_process_share_the_folder_and_the_log_purge_still_runs(
    pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path
) -> None:
    """The lock is per process: several stores on one folder work, and a forget (whose Chroma
    log purge runs in a worker process on the folder's SQLite file) completes."""
    settings = store_settings(pg_db_url, tmp_data_dir, embedding_model_dir)
    async with open_store(settings) as one, open_store(settings) as two:
        await truncate(one)
        record = await one.write(ANA, NewMemory("My locker code word is walrus"))
        assert await two.index.held([record]) == {record.id}
        await forget_user(two, ANA)
        assert await one.index.count_scope(ANA) == 0


# --- reindex reads Chroma back ---------------------------------------------------------------


@pytest.fixture
def own_chroma(tmp_path: Path) -> Iterator[ChromaServer]:
    """A Chroma server of this test alone, so wiping its folder touches no other test."""
    server = ChromaServer(tmp_path / "chroma")
    (tmp_path / "chroma").mkdir()
    server.start()
    yield server
    server.stop()


def _wipe(server: ChromaServer) -> None:
    """An outage that comes back empty: stopped, its folder lost, started again."""
    server.stop()
    shutil.rmtree(server.path)
    server.path.mkdir()
    server.start()


@pytest.fixture
async def wiped_store(
    pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path, own_chroma: ChromaServer
) -> AsyncIterator[tuple[MemoryStore, Settings]]:
    settings = server_settings(
        pg_db_url, tmp_data_dir, embedding_model_dir, own_chroma.url, prefix="lost"
    )
    async with open_store(settings) as store:
        await truncate(store)
        records = await _write(store)
        assert await store.index.held(records) == {r.id for r in records}
        yield store, settings


async def test_reindex_after_chroma_came_back_empty_puts_everything_back_and_says_so(
    wiped_store: tuple[MemoryStore, Settings], own_chroma: ChromaServer
) -> None:
    store, _ = wiped_store
    _wipe(own_chroma)
    assert len(await _marked_but_not_held(store)) == 5  # what the old reindex never looked at
    report = await reindex_checked(store)
    assert (report.checked, report.lost, report.verified, report.missing) == (5, 5, 5, 0)
    assert report.ok and report.pending == 0
    assert await _marked_but_not_held(store) == []
    assert await store.index.count_scope(ANA) == 3 and await store.index.count_scope(BEN) == 2


async def test_reindex_finds_entries_lost_one_by_one_or_given_to_another_owner(
    wiped_store: tuple[MemoryStore, Settings], own_chroma: ChromaServer
) -> None:
    """Partial losses: one entry deleted, one left without its vector's owner (a stale retag),
    one moved under another user's owner tag; each is found, reported and written again."""
    store, settings = wiped_store
    ana = await store.list_memories(ANA)
    ben = await store.list_memories(BEN)
    client = chromadb.HttpClient(
        host="127.0.0.1", port=own_chroma.port, settings=ChromaSettings(anonymized_telemetry=False)
    )
    shards = settings.chroma_shards
    ana_col = client.get_collection(
        store.index.collection_name(ana[0].kind.layer, shard_of(ANA, shards))
    )
    ben_col = client.get_collection(
        store.index.collection_name(ben[0].kind.layer, shard_of(BEN, shards))
    )
    ana_col.delete(ids=[ana[0].id])
    ana_col.update(ids=[ana[1].id], metadatas=[{"owner": "nobody"}])
    metas = ana_col.get(ids=[ana[2].id], include=["metadatas"])["metadatas"]
    assert metas
    ana_owner = metas[0]["owner"]
    ben_col.update(ids=[ben[0].id], metadatas=[{"owner": ana_owner}])
    report = await reindex_checked(store)
    assert (report.checked, report.lost, report.verified, report.missing) == (5, 3, 3, 0)
    assert await _marked_but_not_held(store) == []


async def test_the_cli_reindex_reports_what_it_checked(
    wiped_store: tuple[MemoryStore, Settings], own_chroma: ChromaServer
) -> None:
    store, settings = wiped_store
    _wipe(own_chroma)
    env = {**os.environ, "DATABASE_URL": settings.database_url or "",
           "CHROMA_URL": own_chroma.url,
           "MEMORY_CHROMA_PREFIX": settings.chroma_prefix}  # fmt: skip
    out = await asyncio.to_thread(_cli, env, "reindex", "--json")
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout)
    assert (report["checked"], report["lost"], report["verified"], report["missing"]) == (
        5, 5, 5, 0,
    )  # fmt: skip
    assert await _marked_but_not_held(store) == []
    text = await asyncio.to_thread(_cli, env, "reindex")
    assert text.returncode == 0
    assert text.stdout.startswith("indexed 0 memories, verified 0 in Chroma, 0 missing")
    assert "checked 5 already indexed, 0 of them missing" in text.stdout


def test_memories_chroma_does_not_keep_stay_pending_and_the_cli_exits_non_zero(
    pg_db_url: str,
    tmp_data_dir: Path,
    embedding_model_dir: Path,
    own_chroma: ChromaServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Chroma answers the upsert but another writer drops some entries right after (what an
    embedded Chroma shared by two processes did): they are not marked, and the CLI says so."""
    settings = server_settings(
        pg_db_url, tmp_data_dir, embedding_model_dir, own_chroma.url, prefix="drop"
    )

    async def seed() -> None:
        async with open_store(settings) as store:
            await truncate(store)
            await _write(store)
            async with store.pool.acquire() as conn:
                await conn.execute("UPDATE memories SET indexed_at = NULL")
        _wipe(own_chroma)

    asyncio.run(seed())
    upsert = VectorIndex._upsert_layer

    def dropping(self: VectorIndex, layer: str, shard: int, rows: list[Any]) -> None:
        upsert(self, layer, shard, rows)
        self._collection(layer, shard).delete(ids=[r.id for r, _ in rows[::2]])

    monkeypatch.setattr(VectorIndex, "_upsert_layer", dropping)
    monkeypatch.setenv("DATABASE_URL", settings.database_url or "")
    monkeypatch.setenv("CHROMA_URL", own_chroma.url)
    monkeypatch.setenv("MEMORY_CHROMA_PREFIX", settings.chroma_prefix)
    from agent.cli import main

    code = main(["reindex"])
    out = capsys.readouterr().out
    assert code == 1, out
    # ANA's three land in one shard (two dropped), BEN's two in another (one dropped).
    assert out.startswith("indexed 5 memories, verified 2 in Chroma, 3 missing → left pending")

    async def check() -> None:
        async with open_store(settings, reindex_on_start=False) as store:
            marked = [i for i, m in await _rows(store) if m]
            assert len(marked) == 2
            assert await _marked_but_not_held(store) == []
            # A write through the same dropping Chroma is not marked indexed either.
            kept = await store.write(ANA, NewMemory("I collect enamel pins"))
            assert (await store.get(ANA, kept.id)).indexed_at is None  # type: ignore[union-attr]

    asyncio.run(check())


# --- through the real server, auth on --------------------------------------------------------


@pytest.mark.e2e
async def test_the_admin_reindex_route_reports_the_tenants_checked_counts(
    secured_server: LangGraphServer,
    pg_db_url: str,
    tmp_data_dir: Path,
    embedding_model_dir: Path,
    _chroma_session: ChromaServer,
) -> None:
    env = secured_server.env
    settings = Settings(
        database_url=pg_db_url, chroma_url=env["CHROMA_URL"], data_dir=tmp_data_dir,
        embedding_model_dir=embedding_model_dir,
    )  # fmt: skip
    async with open_store(settings) as store:
        records = await _write(store)
        async with store.pool.acquire() as conn:
            # Earlier tests of this module leave acme memories too: every one marked indexed is
            # read back by acme's admin, and none of globex's.
            acme_indexed = await conn.fetchval(
                "SELECT count(*) FROM memories WHERE tenant_id = 'acme'"
                " AND indexed_at IS NOT NULL AND status <> 'deleted'"
            )
        assert acme_indexed >= 3
        # The index loses the documents under the running server: its collections are gone.
        client = chromadb.HttpClient(
            host="127.0.0.1", port=_chroma_session.port,
            settings=ChromaSettings(anonymized_telemetry=False),
        )  # fmt: skip
        for name in store.index.current_collections():
            if name in {c.name for c in client.list_collections()}:
                client.delete_collection(name)
        async with httpx.AsyncClient(base_url=secured_server.url, timeout=180) as http:
            user = await http.post("/memory/admin/reindex", headers=bearer(ANA))
            assert user.status_code == 403
            token = mint_token(Scope("acme", f"ops{TAG}"), SECURED_SECRET,
                               permissions=[PERMISSION_ADMIN])  # fmt: skip
            answer = await http.post(
                "/memory/admin/reindex", headers={"Authorization": f"Bearer {token}"}
            )
        assert answer.status_code == 200, answer.text
        body = answer.json()
        # Acme's were read back, found missing and written again; globex's are not counted
        # for acme's admin.
        assert (body["checked"], body["lost"], body["missing"], body["ok"]) == (
            acme_indexed,
            acme_indexed,
            0,
            True,
        )
        assert body["verified"] >= 3 and body["unindexed"] == 0
        ana = {r.id for r in records if r.scope == ANA}
        assert await store.index.held([r for r in records if r.scope == ANA]) == ana
