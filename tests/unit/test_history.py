"""Questions about the past pick the value that held then from an update chain (no database)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from memory.attributes import asked_attributes
from memory.recall.attribute_match import promote
from memory.recall.history import from_replaced, past_question, pick, with_history
from memory.recall.temporal import statement_start
from memory.types import (
    Category,
    MemoryKind,
    MemoryRecord,
    Origin,
    Relevance,
    ScoreBreakdown,
    ScoredMemory,
    Source,
    Status,
)

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _day(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def _record(mid: str, content: str, said: str, start: str | None, end: str | None) -> MemoryRecord:
    return MemoryRecord(
        id=mid, tenant_id="t", user_id="u", kind=MemoryKind.EPISODIC, content=content,
        source=Source.CHAT, origin=Origin.EXPLICIT, category=Category.FACT, importance=0.5,
        confidence=0.7, created_at=_day(said), occurred_at=_day(said), expires_at=None,
        access_count=0, last_accessed=None,
        status=Status.SUPERSEDED if end else Status.ACTIVE, superseded_by=None, provenance={},
        content_hash=mid, version=1, indexed_at=None,
        valid_from=_day(start) if start else None, valid_to=_day(end) if end else None,
    )  # fmt: skip


BERLIN = _record("b", "I live in Berlin.", "2019-01-10", None, "2021-03-01")
MUNICH = _record("m", "I moved to Munich in March.", "2021-04-02", "2021-03-01", "2024-09-01")
HAMBURG = _record("h", "These days I live in Hamburg.", "2024-09-01", "2024-09-01", None)
EARLIER = [MUNICH, BERLIN]  # newest first, as storage returns them


@pytest.mark.parametrize(
    ("question", "want"),
    [
        ("Where did I live before Munich?", "b"),
        ("Where did I live before Hamburg?", "m"),
        ("Where did I use to live?", "m"),
        ("Where did I live originally?", "b"),
        ("Where did I live in 2022?", "m"),
        ("Where did I live in 2020?", "b"),
        ("Where did I live in 2025?", None),  # the current value held then
        ("我以前住在哪里？", "m"),
        ("我最早住在哪？", "b"),
        ("搬到汉堡之前我住在哪？", "m"),
        ("2020年我住在哪？", "b"),
    ],
)
def test_the_asked_time_picks_the_value_that_held(question: str, want: str | None) -> None:
    asked = past_question(question, NOW)
    assert asked is not None
    chosen = pick(asked, HAMBURG, EARLIER, NOW)
    assert (chosen.id if chosen else None) == want


@pytest.mark.parametrize(
    "question",
    ["Where do I live?", "How old is my dog?", "What should I do before the meeting?", "我住哪？"],
)
def test_present_questions_keep_the_current_value(question: str) -> None:
    asked = past_question(question, NOW)
    assert asked is None or pick(asked, HAMBURG, EARLIER, NOW) is None


def _scored(record: MemoryRecord, total: float, passed: bool = True) -> ScoredMemory:
    relevance = Relevance(passed=passed, cosine=0.2, words=0.0, reason="test")
    b = ScoreBreakdown(total, 0.0, 0.0, 0.0, 0.0, relevance=relevance)
    return ScoredMemory(record=record, score=b.total, breakdown=b)


def test_the_earlier_value_goes_above_its_successor_or_first_when_an_attribute_is_asked() -> None:
    other = _record("o", "I'm allergic to peanuts.", "2023-01-01", None, None)
    hits = [_scored(other, 0.9), _scored(HAMBURG, 0.5)]
    asked = past_question("Where did I use to live?", NOW)
    assert asked is not None
    out = with_history(hits, {"h": EARLIER}, asked, NOW)
    assert [h.record.id for h in out] == ["o", "m", "h"]
    assert out[1].score > out[2].score and out[1].score == pytest.approx(out[1].breakdown.total)
    # The question asks for an attribute: a hit with no chain that ranks above the chain's
    # current value does not keep the past value from the top.
    out = with_history(hits, {"h": EARLIER}, asked, NOW, first=True)
    assert [h.record.id for h in out] == ["m", "o", "h"]
    assert out[0].score > out[1].score > out[2].score
    assert out[0].score == pytest.approx(out[0].breakdown.total)


def test_a_statement_starts_when_its_own_words_say() -> None:
    said = _day("2023-06-15")
    assert statement_start("I moved to Munich last month.", said) == _day("2023-05-01")
    assert statement_start("Since 2021 I work at SAP.", said) == _day("2021-01-01")
    assert statement_start("我去年搬到深圳了。", said) == _day("2022-01-01")
    assert statement_start("These days I drink tea.", said) == said


@pytest.mark.parametrize(
    ("question", "attribute"),
    [
        ("Where do I live?", "residence"),
        ("Which city did I live in during 2024?", "residence"),
        ("Who do I work for?", "employer"),
        ("Which editor do I use?", "editor"),
        ("What do I drink in the morning?", "drink"),
        ("When is our standup?", "schedule:standup"),
        ("我现在住在哪里？", "residence"),
        ("2021年我在哪里工作？", "employer"),
        ("我早上喝什么？", "drink"),
    ],
)
def test_questions_name_the_attribute_they_ask_for(question: str, attribute: str) -> None:
    assert attribute in asked_attributes(question)


@pytest.mark.parametrize("text", ["How do I read a file?", "I live in Berlin.", "谢谢你的帮助"])
def test_other_text_asks_for_no_attribute(text: str) -> None:
    assert asked_attributes(text) == frozenset()


def test_the_memory_that_sets_the_asked_attribute_passes_and_comes_first() -> None:
    other = _record("o", "I'm allergic to peanuts.", "2023-01-01", None, None)
    ranked = [("o", _scored(other, 0.9).breakdown), ("h", _scored(HAMBURG, 0.1, False).breakdown)]
    out = promote("Where do I live?", ranked, {"o": other, "h": HAMBURG})
    assert [mid for mid, _ in out] == ["h", "o"]
    lifted = out[0][1]
    assert lifted.attribute > 0 and lifted.relevance is not None and lifted.relevance.passed
    assert "residence" in lifted.relevance.reason
    assert promote("How do I read a file?", ranked, {"o": other, "h": HAMBURG}) == ranked


def test_a_current_question_lifts_the_newest_of_two_values_that_both_hold() -> None:
    # Two active memories set the same attribute (an ambiguous conflict, or a raw store).
    older = _record("old", "I live in Berlin.", "2020-01-01", None, None)
    newer = _record("new", "I moved to Hamburg.", "2024-01-01", None, None)
    ranked = [("old", _scored(older, 0.8).breakdown), ("new", _scored(newer, 0.3).breakdown)]
    records = {"old": older, "new": newer}
    assert [m for m, _ in promote("Where do I live?", ranked, records)] == ["new", "old"]
    past = promote("Where did I live in 2021?", ranked, records)
    assert [m for m, _ in past] == ["old", "new"]


@pytest.mark.parametrize(
    ("question", "want"),
    [
        ("Where did I live in 2021?", "berlin"),
        ("Where did I live in 2023?", "munich"),
        ("Where did I live before Hamburg?", "munich"),
        ("Where did I live before Munich?", "berlin"),
        ("Where did I live originally?", "berlin"),
        ("Where did I use to live?", "munich"),
        ("我2021年住在哪？", "berlin"),
    ],
)
def test_values_stored_side_by_side_are_read_as_a_chain_for_a_past_question(
    question: str, want: str
) -> None:
    # No update linked them (the later statements were stored beside the earlier ones): each
    # held from the day it was said until the next was said.
    records = {
        "berlin": _record("berlin", "I live in Berlin.", "2020-01-01", None, None),
        "munich": _record("munich", "I live in Munich now.", "2022-06-01", None, None),
        "hamburg": _record("hamburg", "I live in Hamburg these days.", "2024-03-01", None, None),
    }
    # The ranking puts the newest first: the chain, not the ranking, decides.
    ranked = [(m, _scored(records[m], s).breakdown)
              for m, s in (("hamburg", 0.9), ("munich", 0.5), ("berlin", 0.3))]  # fmt: skip
    assert promote(question, ranked, records, now=NOW)[0][0] == want
    # Said the same day, two statements are no value and its successor: the ranking decides.
    same_day = {m: replace(r, occurred_at=_day("2022-06-01")) for m, r in records.items()}
    assert promote(question, ranked, same_day, now=NOW)[0][0] == "hamburg"


def test_replaced_values_are_read_directly_when_no_recalled_value_leads_back() -> None:
    asked = past_question("Where did I live in 2020?", NOW)
    assert asked is not None
    assert from_replaced(asked, frozenset({"residence"}), EARLIER, NOW) is BERLIN
    first = past_question("Where did I live at first?", NOW)
    assert first is not None
    assert from_replaced(first, frozenset({"residence"}), EARLIER, NOW) is BERLIN
    assert from_replaced(asked, frozenset({"employer"}), EARLIER, NOW) is None
