"""Facts that change, end to end on real Postgres + Chroma + MiniLM: windows, the past, restore."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory.gating.ingest import ingest_text
from memory.gating.ingest.apply import write_with_policy
from memory.storage.store import MemoryStore
from memory.storage.timeline import NotRestorable, replaced_values, restore, timeline
from memory.system import recaller
from memory.types import MemoryKind, NewMemory, Scope, Source, Status

ALICE = Scope("acme", "alice")
NOW = datetime(2026, 12, 1, tzinfo=UTC)


@pytest.fixture
def store(clean_store: MemoryStore) -> MemoryStore:
    """This module's tests call the shared emptied store `store`."""
    return clean_store


def _at(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=UTC)


async def _say(store: MemoryStore, text: str, day: str) -> list[str]:
    results = await ingest_text(store, ALICE, text, occurred_at=_at(day), require_approval=False)
    return [r.action for r in results]


async def _top(store: MemoryStore, query: str) -> str:
    hits = await recaller(store).recall(ALICE, query, k=5, now=NOW, record_access=False)
    assert hits, f"nothing recalled for {query!r}"
    return hits[0].record.content


async def test_a_natural_update_closes_the_old_window_and_keeps_the_old_value(
    store: MemoryStore,
) -> None:
    assert await _say(store, "I live in Berlin.", "2021-03-10") == ["stored"]
    assert await _say(store, "I moved to Munich last month.", "2023-06-15") == ["superseded"]
    old = await store.list_memories(ALICE, statuses=("superseded",))
    new = await store.list_memories(ALICE)
    assert [m.content for m in old] == ["I live in Berlin."]
    assert [m.content for m in new] == ["I moved to Munich last month."]
    # "last month", said on 15 June 2023, is May: the move began on 1 May.
    assert new[0].valid_from == _at("2023-05-01") and new[0].valid_to is None
    assert old[0].valid_to == _at("2023-05-01") and old[0].superseded_by == new[0].id
    assert "Munich" in await _top(store, "Where do I live?")
    assert "Berlin" in await _top(store, "Where did I live before Munich?")
    assert "Berlin" in await _top(store, "Which city did I use to live in?")
    assert "Berlin" in await _top(store, "Where did I live in 2022?")
    hits = await recaller(store).recall(ALICE, "Where do I live now?", k=5, now=NOW)
    assert all("Berlin" not in h.record.content for h in hits)


async def test_chinese_updates_and_past_questions(store: MemoryStore) -> None:
    assert await _say(store, "我住在北京。", "2020-04-01") == ["stored"]
    assert await _say(store, "我去年搬到深圳了。", "2024-02-10") == ["superseded"]
    current = await store.list_memories(ALICE)
    assert [m.content for m in current] == ["我去年搬到深圳了。"]
    assert current[0].valid_from == _at("2023-01-01")
    assert "深圳" in await _top(store, "我现在住在哪里？")
    assert "北京" in await _top(store, "我以前住在哪里？")
    assert "北京" in await _top(store, "搬到深圳之前我住在哪？")


async def test_three_values_the_asked_time_picks_the_one_that_held(store: MemoryStore) -> None:
    await _say(store, "I work at Siemens.", "2019-05-01")
    await _say(store, "I joined Bosch in March.", "2021-04-02")
    await _say(store, "These days I work at SAP.", "2024-09-01")
    assert [m.content for m in await store.list_memories(ALICE)] == ["These days I work at SAP."]
    assert "SAP" in await _top(store, "Where do I work?")
    assert "Bosch" in await _top(store, "Where did I work in 2022?")
    assert "Siemens" in await _top(store, "Where did I work in 2020?")
    assert "Siemens" in await _top(store, "Where did I originally work?")
    assert "Bosch" in await _top(store, "Where did I work before SAP?")
    assert "Siemens" in await _top(store, "Where did I work before Bosch?")
    # The cited window of the middle value: from March 2021 to the day SAP was said.
    steps = await timeline(store, ALICE, (await store.list_memories(ALICE))[0].id)
    assert [s.record.content.split()[-1] for s in steps] == ["Siemens.", "March.", "SAP."]
    assert steps[1].record.valid_from == _at("2021-03-01")
    assert steps[1].record.valid_to == _at("2024-09-01")
    assert steps[0].ended_by is not None and steps[0].ended_by["event"] == "supersede"


async def test_agreeing_statements_reinforce_and_never_close_a_window(
    store: MemoryStore,
) -> None:
    await _say(store, "I drink tea in the morning.", "2024-01-01")
    await _say(store, "Tea is my morning drink; I don't like coffee.", "2024-02-01")
    await _say(store, "Mornings are for tea, never coffee.", "2024-03-01")
    assert not await store.list_memories(ALICE, statuses=("superseded",))
    events = {e["event"] for e in await store.events(ALICE)}
    assert "supersede" not in events and "conflict" not in events
    assert all(m.valid_to is None for m in await store.list_memories(ALICE))


async def test_restore_undoes_a_wrong_update_in_one_audited_action(store: MemoryStore) -> None:
    await _say(store, "I live in Berlin.", "2021-03-10")
    await _say(store, "I moved to Munich last month.", "2023-06-15")
    old = (await store.list_memories(ALICE, statuses=("superseded",)))[0]
    wrong = (await store.list_memories(ALICE))[0]
    restored = await restore(store, ALICE, old.id)
    assert restored.status is Status.ACTIVE and restored.valid_to is None
    now_wrong = await store.get(ALICE, wrong.id)
    assert now_wrong is not None and now_wrong.status is Status.SUPERSEDED
    assert now_wrong.superseded_by == old.id and now_wrong.valid_from is None
    assert "Berlin" in await _top(store, "Where do I live?")
    # A value marked wrong is not history: a past question does not bring it back.
    hits = await recaller(store).recall(ALICE, "Where did I live before?", k=5, now=NOW)
    assert all("Munich" not in h.record.content for h in hits)
    events = [(e["memory_id"], e["event"]) for e in await store.events(ALICE)]
    assert (old.id, "restore") in events and (wrong.id, "marked_wrong") in events
    with pytest.raises(NotRestorable):
        await restore(store, ALICE, old.id)  # active: nothing to restore
    with pytest.raises(NotRestorable):
        await restore(store, Scope("acme", "bob"), wrong.id)  # never another user's


async def test_consolidation_and_profile_read_only_current_values(store: MemoryStore) -> None:
    await _say(store, "I prefer Python for scripts.", "2022-01-01")
    await _say(store, "These days I prefer Rust for scripts.", "2024-01-01")
    current = await store.list_memories(ALICE)
    assert [m.content for m in current] == ["These days I prefer Rust for scripts."]
    rules = await store.strongest_long_term(ALICE, 12)
    assert all("Python" not in r.content for r in rules)


async def test_an_update_no_pattern_reads_is_found_by_meaning_and_answered(
    store: MemoryStore,
) -> None:
    # Neither statement is read by `memory.attributes`' patterns; the attribute is read by
    # meaning (`memory.attribute_meaning`) when writing, and when the question is asked.
    assert await _say(store, "I have a golden retriever.", "2019-05-01") == ["stored"]
    assert await _say(store, "These days it's a parrot that keeps me company.", "2024-07-15") == [
        "superseded"
    ]
    current = await store.list_memories(ALICE)
    assert [m.content for m in current] == ["These days it's a parrot that keeps me company."]
    # It sets an attribute: no fact lifetime, so two years on it is still in force.
    assert current[0].expires_at is None
    assert "parrot" in await _top(store, "What pet do I have?")
    assert "golden retriever" in await _top(store, "What pet did I have in 2020?")


async def test_a_terse_update_is_kept_only_when_it_replaces_something_said(
    store: MemoryStore,
) -> None:
    # No first person: the rules gate reads it as small talk. Alone it stays dropped ...
    assert await _say(store, "Mornings are green tea now.", "2024-01-10") == ["dropped"]
    # ... and after the value it replaces, it is kept as the update.
    assert await _say(store, "I drink coffee every morning.", "2024-02-01") == ["stored"]
    assert await _say(store, "Mornings are green tea now.", "2024-06-01") == ["superseded"]
    assert [m.content for m in await store.list_memories(ALICE)] == ["Mornings are green tea now."]
    events = await store.events(ALICE)
    assert any("by meaning" in str(e.get("reason", "")) for e in events), events


OFF_TOPIC = [
    "What do I need to bring to a job interview?",
    "When do I need to renew my passport?",
    "What did I just ask you?",
    "Which of these two laptops is lighter?",
    "我明天需要带什么去面试？",
]


async def test_a_question_that_asks_no_value_of_the_user_lifts_nothing(store: MemoryStore) -> None:
    for text in ("I work at Siemens.", "I live in Berlin.", "I drive a Golf.",
                 "I drink coffee every morning.", "我在腾讯工作。"):  # fmt: skip
        await _say(store, text, "2024-01-01")
    for query in OFF_TOPIC:
        hits = await recaller(store).recall(ALICE, query, k=5, now=NOW, record_access=False)
        lifted = [h.record.content for h in hits if h.breakdown.attribute > 0]
        assert lifted == [], (query, lifted)


async def test_a_value_that_replaces_another_holds_until_it_is_replaced(store: MemoryStore) -> None:
    assert await _say(store, "My morning drink is a flat white.", "2021-02-01") == ["stored"]
    assert await _say(
        store, "Got really into matcha, it's my morning thing now.", "2023-03-01"
    ) == ["superseded"]
    current = await store.list_memories(ALICE)
    assert [m.expires_at for m in current] == [None]
    assert "matcha" in await _top(store, "What do I drink in the morning now?")


async def test_a_fact_of_an_attribute_nothing_reads_holds_until_replaced(
    store: MemoryStore,
) -> None:
    # No pattern or example reads a quiz team's name as an attribute: with a fixed lifetime for
    # facts it was gone three months later.
    said = "Our pub quiz team at the Drovers Arms is called The Quizzly Bears."
    assert await _say(store, said, "2021-03-04") == ["stored"]
    assert [m.expires_at for m in await store.list_memories(ALICE)] == [None]
    assert "Quizzly Bears" in await _top(store, "What is my pub quiz team called?")


async def test_a_question_about_the_user_finds_the_users_value(store: MemoryStore) -> None:
    # An assistant or a tool asks about "the user" (the MCP recall tool's callers do); the
    # statement shares no word with the question.
    assert await _say(store, "I work at Siemens.", "2020-01-10") == ["stored"]
    assert await _say(store, "I joined Tidewell in March.", "2023-04-01") == ["superseded"]
    assert "Tidewell" in await _top(store, "Who is the user's employer now?")
    assert "Siemens" in await _top(store, "Where did the user work in 2021?")


async def test_a_new_value_that_leaves_its_topic_unsaid_is_found_by_the_one_it_replaced(
    store: MemoryStore,
) -> None:
    # "Lena comes on Thursdays" says nothing of piano; the statement it replaced does.
    assert await _say(store, "My piano teacher is Mrs. Abara.", "2019-05-01") == ["stored"]
    assert await _say(
        store, "Mrs. Abara moved away, so Lena comes on Thursdays instead.", "2023-02-01"
    ) == ["superseded"]
    (current,) = await store.list_memories(ALICE)
    assert current.content.startswith("Mrs. Abara moved away")  # its text is what was said
    assert "Lena" in await _top(store, "Who teaches me piano now?")
    assert "teacher is Mrs. Abara" in await _top(store, "Who taught me piano in 2020?")


async def test_flagged_text_that_replaces_a_value_keeps_its_short_lifetime(
    store: MemoryStore,
) -> None:
    assert await _say(store, "I live in Berlin.", "2021-03-10") == ["stored"]
    flagged = NewMemory(content="I moved to Munich last month.", kind=MemoryKind.EPISODIC,
                        source=Source.TOOL, ttl_days=7, provenance={"trust": "low"},
                        occurred_at=_at("2023-06-15"))  # fmt: skip
    outcome = await write_with_policy(store, ALICE, flagged)
    assert outcome.action == "superseded"
    [current] = await store.list_memories(ALICE)
    assert current.expires_at == _at("2023-06-22")


async def test_a_short_statement_of_a_value_is_kept_and_reactions_are_not(
    store: MemoryStore,
) -> None:
    # Too short for the gate's score, but each states a value of the user's (read by meaning).
    assert await _say(store, "I support Celtic.", "2024-01-10") == ["stored"]
    assert await _say(store, "I wear contact lenses.", "2024-01-11") == ["stored"]
    # First person too, but reactions: nothing about the user.
    assert await _say(store, "I love that idea!", "2024-01-12") == ["dropped"]
    assert await _say(store, "I see what you mean.", "2024-01-13") == ["dropped"]
    kept = await store.list_memories(ALICE)
    assert sorted(m.content for m in kept) == ["I support Celtic.", "I wear contact lenses."]
    assert all(m.expires_at is None for m in kept)
    events = await store.events(ALICE)
    assert any("states a value" in str(e.get("reason", "")) for e in events), events


async def test_a_statement_that_leaves_out_its_subject_is_the_users_own_news(
    store: MemoryStore,
) -> None:
    # Chat drops the subject ("Left ...", "跳到..."): said to the assistant, it is the user's.
    # The rules gate reads both as small talk (no first person); nothing earlier is replaced.
    coffee = "Cutting back on caffeine, so it's a decaf flat white for me these days."
    assert await _say(store, coffee, "2024-01-10") == ["stored"]
    assert await _say(store, "跳到米哈游了，还是做策划。", "2024-01-11") == ["stored"]
    # A question that leaves out its subject states nothing.
    assert await _say(store, "Switched to dark mode yet?", "2024-01-12") == ["dropped"]
    assert await _say(store, "Moved the meeting to Friday?", "2024-01-13") == ["dropped"]
    kept = sorted(m.content for m in await store.list_memories(ALICE))
    assert kept == [coffee, "跳到米哈游了，还是做策划。"]
    assert await _top(store, "Which company do I work for now?") == "跳到米哈游了，还是做策划。"


async def test_one_statement_closing_two_windows_keeps_the_later_value_as_the_newer(
    store: MemoryStore,
) -> None:
    # Two values said side by side, both replaced by one later statement: their windows end
    # together, and the one that began later held last (a tie broken by chance before).
    await _say(store, "My usual order is a large latte.", "2021-02-10")
    await _say(store, "I've gone over to flat whites, even in summer.", "2022-07-21")
    await _say(
        store, "Cutting back on caffeine, so it's decaf tea for me these days.", "2024-01-15"
    )
    [current] = await store.list_memories(ALICE)
    chain = (await replaced_values(store, ALICE, [current.id]))[current.id]
    assert [m.content.split()[-1] for m in chain] == ["summer.", "latte."]
    assert chain[0].valid_to == chain[1].valid_to
    assert "flat white" in await _top(store, "What was my usual coffee order in 2023?")
    assert "latte" in await _top(store, "What was my usual coffee order originally?")
