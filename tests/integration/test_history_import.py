"""`memory-agent import`: JSONL and LoCoMo files, gated and raw, round trip and resume."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memory.gating.ingest.history import (
    ImportFileError,
    file_digest,
    import_messages,
    read_messages,
)
from memory.storage.store import MemoryStore, open_store
from memory.system import recaller
from memory.types import Scope
from tests.support.memory_stores import store_settings, truncate
from tests.support.ports import REPO_ROOT

USER = Scope("acme", "importer")
CHAT = [
    {"role": "user", "content": "Hi there!"},
    {"role": "assistant", "content": "Hello! How can I help?"},
    {"role": "user", "content": "My niece Quillanora plays the oboe in the school orchestra."},
    {"role": "assistant", "content": "That's lovely. Is she preparing for a concert?"},
    {"role": "user", "content": "I'm allergic to shellfish, keep that in mind for recipes."},
    {"role": "user", "content": "My card number is 4111 1111 1111 1111."},
    {"role": "user", "content": "We decided to move the team offsite to Ghent in May."},
    {"role": "user", "content": "Thanks, that's all for today."},
]


def _write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture
async def store(
    pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path
) -> AsyncIterator[MemoryStore]:
    async with open_store(store_settings(pg_db_url, tmp_data_dir, embedding_model_dir)) as s:
        await truncate(s)
        yield s


async def _contents(store: MemoryStore, scope: Scope) -> list[str]:
    return [r.content for r in await store.list_memories(scope, limit=10_000)]


async def test_gated_import_round_trip(store: MemoryStore, tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path / "chat.jsonl", CHAT)
    messages = read_messages(path)
    report = await import_messages(store, USER, messages, source=file_digest(path))
    stored = await _contents(store, USER)
    assert report.stored == len(stored)
    assert any("Quillanora" in c for c in stored)
    assert any("shellfish" in c for c in stored)
    assert not any("4111" in c for c in stored)  # a high-risk secret is never stored
    assert not any(c.startswith(("Hi there", "Thanks")) for c in stored)
    assert not any("How can I help" in c for c in stored)
    hits = await recaller(store).recall(USER, "what instrument does my niece play?", k=3)
    assert hits and "oboe" in hits[0].record.content


async def test_raw_import_stores_every_message_redacted(store: MemoryStore, tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path / "chat.jsonl", CHAT)
    report = await import_messages(
        store, USER, read_messages(path), source=file_digest(path), gated=False, batch_size=3
    )
    assert report.stored == len(CHAT) and report.dropped == 0
    contents = await _contents(store, USER)
    assert len(contents) == len(CHAT)
    assert not any("4111" in c for c in contents)  # redacted even when not gated


async def test_an_interrupted_import_resumes_without_duplicates(
    store: MemoryStore, tmp_path: Path
) -> None:
    rows = [{"role": "user", "content": f"Note {i}: my locker number at gym {i} is {100 + i}."}
            for i in range(40)]  # fmt: skip
    path = _write_jsonl(tmp_path / "long.jsonl", rows)
    messages, source = read_messages(path), file_digest(path)
    seen: list[int] = []

    def stop_after_two_batches(n: int) -> None:
        seen.append(n)
        if len(seen) == 2:
            raise KeyboardInterrupt  # as a user pressing Ctrl-C mid-import

    with pytest.raises(KeyboardInterrupt):
        await import_messages(
            store, USER, messages, source=source, gated=False, batch_size=10,
            progress=stop_after_two_batches,
        )  # fmt: skip
    assert len(await _contents(store, USER)) == 20
    report = await import_messages(store, USER, messages, source=source, gated=False, batch_size=10)
    assert report.skipped_done == 20 and report.stored == 20
    contents = await _contents(store, USER)
    assert len(contents) == 40 and len(set(contents)) == 40
    again = await import_messages(store, USER, messages, source=source, gated=False)
    assert again.stored == 0 and again.skipped_done == 40


async def test_locomo_file_import(store: MemoryStore) -> None:
    path = REPO_ROOT / "bench" / "devsets" / "planning.json"
    messages = read_messages(path)
    sessions = {m.session for m in messages}
    assert len(sessions) > 2 and all(m.occurred_at for m in messages)
    report = await import_messages(store, USER, messages, source=file_digest(path), gated=False)
    assert report.stored == len(messages)
    hits = await recaller(store).recall(USER, "Where is my sister's wedding?", k=5)
    assert hits and any("Lisbon" in h.record.content for h in hits)
    assert hits[0].record.provenance["import"]["source"] == file_digest(path)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("not json\n", "not JSON"),
        ("[1, 2]\n", "no 'conversation'"),
        ('{"role": "user"}\n', "no text"),
        ('"just a string"\n', "an object per line"),
    ],
)
def test_bad_files_get_a_clear_error(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(ImportFileError, match=message):
        read_messages(path)
    with pytest.raises(ImportFileError, match="cannot read"):
        read_messages(tmp_path / "missing.jsonl")


def test_unknown_roles_are_read_as_the_user(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path / "roles.jsonl", [{"role": "SYSTEM-ADMIN", "content": "x"},
                                                   {"role": "System", "content": "y"}])  # fmt: skip
    assert [m.role for m in read_messages(path)] == ["user", "system"]


def test_the_cli_imports_and_resumes(pg_db_url: str, tmp_data_dir: Path, tmp_path: Path) -> None:
    env = {**os.environ, "DATABASE_URL": pg_db_url, "MEMORY_DATA_DIR": str(tmp_data_dir)}
    path = _write_jsonl(tmp_path / "chat.jsonl", CHAT)

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "agent.cli", "import", str(path), "--user", "cli-imp", *extra],
            cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=180, check=False,
        )  # fmt: skip

    first = run("--json", "--no-progress")
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["stored"] >= 3 and report["already_imported"] == 0
    second = run("--json", "--no-progress")
    assert json.loads(second.stdout)["stored"] == 0
    bad = subprocess.run(
        [sys.executable, "-m", "agent.cli", "import", str(tmp_path / "nope.jsonl"), "--user", "u"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert bad.returncode == 2 and "cannot read" in bad.stderr
