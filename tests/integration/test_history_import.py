"""`memory-agent import`: JSONL and LoCoMo files, gated and raw, round trip and resume."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory.gating.gate import GatePolicy
from memory.gating.ingest.history import (
    ImportFileError,
    file_digest,
    import_messages,
    read_messages,
    to_memory,
)
from memory.gating.privacy import PrivacyFilter
from memory.storage.store import MemoryStore, open_store
from memory.system import recaller
from memory.types import Scope
from tests.support.chroma_server import ChromaServer
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


def _write_jsonl(path: Path, rows: Sequence[Mapping[str, object]]) -> Path:
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
    # The planner's statistics count the imported rows (recall is planned for them at once).
    async with store.pool.acquire() as conn:
        counted = await conn.fetchval("SELECT reltuples FROM pg_class WHERE relname = 'memories'")
    assert counted >= len(CHAT)


@pytest.mark.parametrize("gated", [False, True])
async def test_a_secret_split_across_messages_is_not_imported(
    store: MemoryStore, tmp_path: Path, gated: bool
) -> None:
    # Each line alone holds nothing the rules know; joined, as a thread's turns are, they do.
    lines = [
        {"role": "user", "content": "I keep the family photos on the NAS in the loft."},
        {"role": "user", "content": "the password for the NAS is"},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "Hunter2Hunter2!x"},
        {"role": "user", "content": "our shared corporate card number is 4514 7104"},
        {"role": "user", "content": "9746 5075 for the hotel bookings."},
    ]
    path = _write_jsonl(tmp_path / "split.jsonl", lines)
    await import_messages(store, USER, read_messages(path), source=file_digest(path), gated=gated)
    async with store.pool.acquire() as conn:
        rows = await conn.fetch("SELECT content, context FROM memories")
    text = " ".join(f"{r['content']} {r['context'] or ''}" for r in rows)
    for part in ("Hunter2Hunter2", "4514 7104", "9746 5075"):
        assert part not in text, part
    if not gated:
        assert "[REDACTED:password]" in text and "[REDACTED:card]" in text


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


async def test_imported_roles_decide_whose_words_a_question_finds(
    store: MemoryStore, tmp_path: Path
) -> None:
    reply = (
        "Trello is a good fit for a marketing specialist. In a marketing role, boards per "
        "campaign keep the work visible; for your next role, try Trello's calendar power-up, "
        "and keep a board of the marketing role's recurring tasks."
    )
    chat = [
        {"role": "user", "content": "I used Trello in my last role as a marketing specialist."},
        {"role": "assistant", "content": reply},
        {"role": "user", "content": "Our cat Miso turned three last week."},
    ]
    path = _write_jsonl(tmp_path / "roles.jsonl", chat)
    await import_messages(store, USER, read_messages(path), source=file_digest(path), gated=False)
    roles = {r.content[:12]: r.provenance["role"] for r in await store.list_memories(USER)}
    assert sorted(roles.values()) == ["assistant", "user", "user"]
    rank = recaller(store)
    mine = await rank.recall(USER, "What was my marketing role, with Trello?", k=2)
    assert mine[0].record.content.startswith("I used Trello"), [h.record.content for h in mine]
    yours = await rank.recall(USER, "What did you suggest for a marketing role with Trello?", k=2)
    assert yours[0].record.content == reply, [h.record.content for h in yours]


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


def test_unknown_and_system_roles_are_read_as_the_user(tmp_path: Path) -> None:
    # A file is client-supplied: its "system" lines would skip the poisoning screen.
    path = _write_jsonl(tmp_path / "roles.jsonl", [{"role": "SYSTEM-ADMIN", "content": "x"},
                                                   {"role": "System", "content": "y"},
                                                   {"role": "tool", "content": "z"}])  # fmt: skip
    assert [m.role for m in read_messages(path)] == ["user", "user", "tool"]


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


# A history mixing what the gate keeps, drops and redacts, in two sessions, long enough for
# several batches: the bulk path must write what one write per memory writes.
MIXED = [
    {"role": "user", "content": "Hi!", "thread_id": "a"},
    {"role": "user", "content": "Remember that my bike lock code is not something to store.",
     "thread_id": "a"},
    {"role": "user", "content": "I moved to Utrecht in March for a job at a bakery.",
     "thread_id": "a"},
    {"role": "assistant", "content": "Congratulations on the move! How is the bakery?",
     "thread_id": "a"},
    {"role": "user", "content": "My email is jan.devries@example.org, use it for reminders.",
     "thread_id": "a"},
    {"role": "user", "content": "Please remember that I prefer tabs over spaces in Python.",
     "thread_id": "b"},
    {"role": "user", "content": "My API key is sk-live-abcdefghijklmnopqrstuvwx12345678.",
     "thread_id": "b"},
    {"role": "user", "content": "我女儿下个月开始学小提琴。", "thread_id": "b"},
    {"role": "user", "content": "Thanks, that's all for today.", "thread_id": "b"},
]  # fmt: skip
# Recent times (episodic memories expire some days after they happened), one per message.
_T0 = datetime.now(UTC) - timedelta(hours=1)
MIXED = [{**r, "timestamp": (_T0 + timedelta(minutes=i)).isoformat()}
         for i, r in enumerate(MIXED * 3)]  # fmt: skip


def _comparable(record: Any, events: list[dict[str, Any]]) -> tuple[Any, ...]:
    provenance = dict(record.provenance)
    return (
        record.content, record.kind, record.source, record.origin, record.category,
        record.importance, record.confidence, record.occurred_at, record.expires_at is None,
        record.status, json.dumps(provenance, sort_keys=True), record.context,
        sorted(record.tags), record.pinned,
        [(e["event"], e["reason"], json.dumps(e["detail"], sort_keys=True)) for e in events],
    )  # fmt: skip


async def _snapshot(store: MemoryStore, scope: Scope) -> tuple[list[tuple[Any, ...]], Any]:
    records, vectors = await store.active_memories(scope)
    pairs = sorted(
        zip(records, vectors, strict=True), key=lambda p: p[0].provenance["import"]["index"]
    )
    rows = [_comparable(r, await store.events(scope, r.id)) for r, _ in pairs]
    return rows, np.vstack([v for _, v in pairs])


@pytest.mark.parametrize("gated", [True, False])
async def test_bulk_import_writes_what_one_write_per_memory_writes(
    store: MemoryStore, tmp_path: Path, gated: bool
) -> None:
    path = _write_jsonl(tmp_path / "mixed.jsonl", MIXED)
    messages, source = read_messages(path), file_digest(path)
    bulk, single = Scope("acme", "bulk"), Scope("acme", "single")
    report = await import_messages(store, bulk, messages, source=source, gated=gated, batch_size=4)
    # The reference: every message through the same gate, stored one `write` at a time.
    policy, privacy = GatePolicy(), PrivacyFilter()
    reasons: dict[str, int] = {}
    for i in range(len(messages)):
        item, reason = to_memory(
            messages, i, source=source, gated=gated, policy=policy, privacy=privacy
        )
        reasons[reason] = reasons.get(reason, 0) + 1
        if item is not None:
            await store.write(single, item, reason="import")
    assert report.reasons == reasons
    got, got_vectors = await _snapshot(store, bulk)
    want, want_vectors = await _snapshot(store, single)
    assert len(got) == report.stored == sum(n for r, n in reasons.items() if r == "stored")
    assert got == want
    # Batching pads texts to a common length; the vectors agree to float rounding.
    assert np.allclose(got_vectors, want_vectors, atol=1e-5)
    contents = " ".join(row[0] for row in got)
    assert "jan.devries@example.org" not in contents and "sk-live" not in contents
    if gated:
        assert "Thanks, that's all" not in contents and "Hi!" not in contents
        assert "tabs over spaces" in contents and "小提琴" in contents
    else:
        assert report.stored == len(MIXED)  # every message, the secrets redacted


async def test_an_import_killed_mid_batch_resumes_without_loss_or_duplicates(
    store: MemoryStore, pg_db_url: str, tmp_path: Path, chroma_server: ChromaServer
) -> None:
    rows = [{"role": "user", "content": f"Entry {i}: the shelf in room {i} holds box {7 * i}."}
            for i in range(400)]  # fmt: skip
    path = _write_jsonl(tmp_path / "big.jsonl", rows)
    # The import runs beside this test's open store: two processes, so a Chroma server (an
    # embedded Chroma serves one process and refuses the second).
    env = {**os.environ, "DATABASE_URL": pg_db_url, "MEMORY_DATA_DIR": str(tmp_path / "cli"),
           "CHROMA_URL": chroma_server.url,
           "MEMORY_CHROMA_PREFIX": f"imp{uuid.uuid4().hex[:8]}"}  # fmt: skip
    command = [sys.executable, "-m", "agent.cli", "import", str(path), "--user", "killed",
               "--tenant", "acme", "--raw", "--batch-size", "50", "--no-progress",
               "--json"]  # fmt: skip
    scope = Scope("acme", "killed")
    victim = subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 150
        # Kill it once some batches are in but not all: it is then inside a batch (embedding
        # the next one, or writing one), the moment an interrupted import must survive.
        while time.monotonic() < deadline and victim.poll() is None:
            if len(await _contents(store, scope)) >= 100:
                break
            await asyncio.sleep(0.2)
        assert victim.poll() is None, "the import ended before it could be killed"
        victim.send_signal(signal.SIGKILL)
    finally:
        victim.wait(timeout=30)
    before = await _contents(store, scope)
    assert 100 <= len(before) < 400 and len(before) % 50 == 0  # whole batches only
    again = await asyncio.to_thread(
        subprocess.run, command, cwd=REPO_ROOT, env=env, capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["already_imported"] == len(before)
    assert report["stored"] == 400 - len(before)
    after = await _contents(store, scope)
    assert len(after) == 400 and len(set(after)) == 400
