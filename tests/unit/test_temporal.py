from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from memory.recall.temporal import (
    TimeRange,
    asks_when,
    event_ranges,
    mentions_time,
    parse_time,
    query_ranges,
    time_match,
    time_question,
)

# A Wednesday afternoon.
NOW = datetime(2023, 5, 10, 14, 30, tzinfo=UTC)


def _days(text: str, now: datetime = NOW) -> list[tuple[date, date]]:
    return [(r.start.date(), r.end.date()) for r in parse_time(text, now)]


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("I went there yesterday", date(2023, 5, 9), date(2023, 5, 10)),
        ("what did we decide last week?", date(2023, 5, 1), date(2023, 5, 8)),
        ("anything from last month", date(2023, 4, 1), date(2023, 5, 1)),
        ("plans for next month", date(2023, 6, 1), date(2023, 7, 1)),
        ("what happened in May", date(2023, 5, 1), date(2023, 6, 1)),
        ("in March 2022", date(2022, 3, 1), date(2022, 4, 1)),
        ("on 8 May, 2023", date(2023, 5, 8), date(2023, 5, 9)),
        ("on October 24, 2023", date(2023, 10, 24), date(2023, 10, 25)),
        ("the 18th of June", date(2023, 6, 18), date(2023, 6, 19)),
        ("back in 2021", date(2021, 1, 1), date(2022, 1, 1)),
        ("3 days ago", date(2023, 5, 7), date(2023, 5, 8)),
        ("two weeks ago", date(2023, 4, 24), date(2023, 5, 1)),
        ("last Friday", date(2023, 5, 5), date(2023, 5, 6)),
        ("last weekend", date(2023, 5, 6), date(2023, 5, 8)),
        ("the day before yesterday", date(2023, 5, 8), date(2023, 5, 9)),
        ("2023-04-01", date(2023, 4, 1), date(2023, 4, 2)),
        ("我昨天去了", date(2023, 5, 9), date(2023, 5, 10)),
        ("上周开会决定的", date(2023, 5, 1), date(2023, 5, 8)),
        ("上个月", date(2023, 4, 1), date(2023, 5, 1)),
        ("三天前", date(2023, 5, 7), date(2023, 5, 8)),
        ("两个月前", date(2023, 3, 1), date(2023, 4, 1)),
        ("2023年5月", date(2023, 5, 1), date(2023, 6, 1)),
        ("5月8日", date(2023, 5, 8), date(2023, 5, 9)),
        ("去年", date(2022, 1, 1), date(2023, 1, 1)),
        ("上周五", date(2023, 5, 5), date(2023, 5, 6)),
        ("十二月", date(2022, 12, 1), date(2023, 1, 1)),
    ],
)
def test_expressions_resolve_relative_to_now(text: str, start: date, end: date) -> None:
    assert _days(text) == [(start, end)]


@pytest.mark.parametrize(
    "text", ["May I ask you something?", "you may like it", "你几月去的", "I love painting"]
)
def test_non_dates_are_not_parsed(text: str) -> None:
    assert parse_time(text, NOW) == []


def test_relative_expressions_in_a_memory_use_its_own_date() -> None:
    said = datetime(2023, 1, 2, 9, 0, tzinfo=UTC)
    ranges = event_ranges("I ran a charity race yesterday", said)
    assert [(r.start.date(), r.end.date()) for r in ranges] == [
        (date(2023, 1, 2), date(2023, 1, 3)),  # the day it was said
        (date(2023, 1, 1), date(2023, 1, 2)),  # "yesterday" from then, not from now
    ]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("When did Caroline go to the support group?", True),
        ("How long has she had her friends?", True),
        ("What year did he move?", True),
        ("你什么时候去的北京？", True),
        ("他多久去一次？", True),
        ("What did Caroline paint?", False),
        ("你喜欢什么颜色", False),
    ],
)
def test_asks_when(query: str, expected: bool) -> None:
    assert asks_when(query) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I had a blast yesterday", True),
        ("We've been friends for 4 years", True),
        ("I signed up in July", True),
        ("最近很忙", True),
        ("I booked the hotel, three nights, with a view of the river", True),
        ("the call took two hours", True),
        ("我们在成都住三晚", True),
        ("跑了四十分钟", True),
        ("I love painting sunsets", False),
        ("这幅画很好看", False),
    ],
)
def test_mentions_time(text: str, expected: bool) -> None:
    assert mentions_time(text) is expected


def test_time_match_is_one_on_overlap_and_decays_with_the_gap() -> None:
    (day,) = parse_time("8 May 2023", NOW)
    same = TimeRange(day.start, day.end)
    near = TimeRange(datetime(2023, 5, 9, tzinfo=UTC), datetime(2023, 5, 10, tzinfo=UTC))
    far = TimeRange(datetime(2023, 8, 1, tzinfo=UTC), datetime(2023, 8, 2, tzinfo=UTC))
    assert time_match([day], [same]) == 1.0
    assert 0.0 < time_match([day], [far]) < time_match([day], [near]) < 1.0
    (year,) = parse_time("2023", NOW)
    assert time_match([year], [far]) == 1.0  # inside the year
    assert time_match([], [same]) == 0.0


def test_a_long_run_of_numerals_is_scanned_once() -> None:
    # Each numeral run is tried from its start only: 200,000 Chinese numerals without a unit
    # after them would take hours if every position started a new match.
    assert not mentions_time("一" * 200_000)
    assert mentions_time("一" * 200_000 + "天")


@pytest.mark.parametrize(
    "query",
    [
        "when did I buy the car",
        "How many weeks ago did I meet my aunt?",
        "Which gift did I buy first, the necklace or the album?",
        "did I move before or after the wedding?",
        "what did I decide last month?",
        "多久以前",
        "上个月我买了什么",
        "我什么时候去的杭州",
    ],
)
def test_time_questions(query: str) -> None:
    assert time_question(query, NOW)


@pytest.mark.parametrize(
    "query",
    [
        "what did I say today about my car",
        "what did I tell you yesterday about my knee?",
        "上次你说的那个餐厅叫什么",
        "昨天我们聊的那本书叫什么",
        "What is my cat's name?",
    ],
)
def test_day_words_that_date_the_asking_are_no_time_question(query: str) -> None:
    assert not time_question(query, NOW)
    assert query_ranges(query, NOW) == []


def test_a_when_question_keeps_its_day_words() -> None:
    assert _days("when did I say yesterday that the boiler broke?") == [
        (date(2023, 5, 9), date(2023, 5, 10))
    ]
    assert len(query_ranges("when did we talk yesterday", NOW)) == 1
