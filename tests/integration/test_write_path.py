"""The write path (gate → dedupe → conflicts → write) on real Postgres + Chroma + MiniLM."""

from __future__ import annotations

import json

import pytest

from memory.gating.gate import gate
from memory.gating.ingest import ingest_text, to_new_memory
from memory.gating.ingest.apply import apply_resolution
from memory.storage.store import MemoryStore
from memory.system import recaller
from memory.types import Origin, Scope, Source, Status
from tests.unit.test_conflicts import PARAPHRASES  # the same 20 wordings, here end to end

ALICE = Scope("acme", "alice")


@pytest.fixture
def store(clean_store: MemoryStore) -> MemoryStore:
    """This module's tests call the shared emptied store `store`."""
    return clean_store


async def _remember(store: MemoryStore, text: str) -> list[str]:
    return [r.action for r in await ingest_text(store, ALICE, text, require_approval=False)]


async def test_newer_explicit_preference_supersedes_and_links(store: MemoryStore) -> None:
    assert await _remember(store, "I prefer Python.") == ["stored"]
    assert await _remember(store, "Actually, I now prefer Rust.") == ["superseded"]
    hits = await recaller(store).recall(ALICE, "Which programming language do I prefer?", k=5)
    assert "Rust" in hits[0].record.content
    assert all("Python" not in h.record.content for h in hits)
    old = [m for m in await store.list_memories(ALICE, statuses=("superseded",))]
    assert len(old) == 1 and "Python" in old[0].content
    assert old[0].superseded_by == hits[0].record.id
    events = {e["event"] for e in await store.events(ALICE)}
    assert {"supersede", "conflict"} <= events


async def test_an_inference_never_overrides_an_explicit_preference(store: MemoryStore) -> None:
    await _remember(store, "I prefer Python.")
    decision = gate("Actually, I now prefer Rust.", role="user")
    inferred = to_new_memory(
        decision, source=Source.CHAT, provenance={}, occurred_at=None, require_approval=False
    )
    inferred.origin = Origin.INFERRED
    outcome = await apply_resolution(store, ALICE, inferred, "policy", reason=decision.reason)
    assert outcome.action == "rejected"
    active = await store.list_memories(ALICE)
    assert [m.content for m in active] == ["I prefer Python."]
    loser = await store.get(ALICE, outcome.memory_id or "")
    assert loser is not None and loser.status is Status.SUPERSEDED
    assert loser.superseded_by == active[0].id


async def test_twenty_paraphrases_make_one_memory(store: MemoryStore) -> None:
    for text in PARAPHRASES:
        await _remember(store, text)
    active = await store.list_memories(ALICE)
    assert len(active) == 1, [m.content for m in active]
    assert active[0].confidence > 0.9
    assert "dark" in active[0].content.lower()


async def test_bidi_controls_never_reach_the_store(store: MemoryStore) -> None:
    # The MCP `remember` tool and store puts pass text here without the chat's input cleaning.
    text = "My locker code is 4471\u202e and I keep my bike at work."
    assert await _remember(store, text) == ["stored"]
    (memory,) = await store.list_memories(ALICE)
    assert memory.content == "My locker code is 4471 and I keep my bike at work."


async def test_pii_never_reaches_any_store(store: MemoryStore) -> None:
    secret_card = "4111 1111 1111 1111"
    await _remember(store, f"My card number is {secret_card}, I always pay with it.")
    await _remember(store, "My API key is sk-proj-abcdefghijklmnopqrstuvwxyz123456, use it.")
    async with store.pool.acquire() as conn:
        rows = await conn.fetch("SELECT to_jsonb(m) AS j FROM memories m")
        events = await conn.fetch("SELECT to_jsonb(e) AS j FROM memory_events e")
    dump = json.dumps([r["j"] for r in rows + events])
    entries = await store.index.documents_for(ALICE)
    assert entries and {doc for _, doc, _ in entries} == {""}
    docs = json.dumps(entries)
    for secret in (secret_card, "4111111111111111", "sk-proj-abcdefghijklmnopqrstuvwxyz123456"):
        assert secret not in dump and secret not in docs


async def test_a_kept_text_longer_than_one_memory_is_dropped_with_a_reason(
    store: MemoryStore,
) -> None:
    from memory.storage.store import MAX_CONTENT_CHARS

    # An unpunctuated paste is one candidate; the gate may keep it, the store cannot: the
    # turn must go on and the audit log must say why nothing was stored.
    scope = Scope("acme", "paste")
    text = "我的" * (MAX_CONTENT_CHARS // 2 + 500)
    results = await ingest_text(store, scope, text, role="user", explicit=True)
    assert results and all(r.memory_id is None for r in results)
    assert any("too long for one memory" in r.reason for r in results)
    assert await store.list_memories(scope) == []


async def test_each_dropped_statement_is_audited_by_hash_beside_what_was_kept(
    store: MemoryStore,
) -> None:
    import hashlib

    scope = Scope("acme", "drops")
    text = "Thanks, that's all. I'm allergic to peanuts. Ok cool. Haha nice."
    results = await ingest_text(store, scope, text, role="user", require_approval=False)
    dropped = [r for r in results if r.action == "dropped"]
    kept = [r for r in results if r.memory_id is not None]
    assert len(dropped) >= 2 and len(kept) == 1  # the allergy only
    events = [e for e in await store.events(scope) if e["event"] == "gate_drop"]
    assert len(events) == len(dropped)
    assert sorted(e["reason"] for e in events) == sorted(r.reason for r in dropped)
    details = [e["detail"] if isinstance(e["detail"], dict) else json.loads(e["detail"])
               for e in events]  # fmt: skip
    said = ("Thanks, that's all.", "Ok cool.", "Haha nice.")
    digests = {store.index.text_digest(s) for s in said}
    assert {d["digest"] for d in details} <= digests
    # Keyed: a plain hash of a guessed text does not confirm it.
    assert not {hashlib.sha256(s.encode()).hexdigest()[:16] for s in said} & digests
    assert all("Thanks" not in json.dumps(e, default=str) for e in events)  # no raw text kept
