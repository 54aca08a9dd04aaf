"""English time expressions resolved against a reference moment."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime

from memory.recall.temporal_units import (
    MONTHS,
    SEASONS,
    WEEKDAYS,
    TimeRange,
    day_range,
    exact_date,
    month_range,
    nearest_date,
    nearest_month,
    relative_month,
    season_range,
    span_ago,
    week_range,
    weekday_range,
    year_range,
)

_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
# Abbreviations ("Jan", "Mar") are names and words too: alone, only full month names count.
_MONTH_FULL = "|".join(name for name in MONTHS if len(name) > 4 or name in ("may", "june", "july"))
_WEEKDAY = "|".join(WEEKDAYS)
_SEASON = "|".join(SEASONS)
_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a few": 3,
    "a couple of": 2, "couple of": 2, "few": 3, "several": 4,
}  # fmt: skip
_AMOUNT = (
    r"\d{1,3}|a couple of|couple of|a few|few|several|an|a|one|two|three|four|five|six|"
    r"seven|eight|nine|ten|eleven|twelve"
)
_OFFSETS = {"last": -1, "past": -1, "previous": -1, "this": 0, "next": 1, "coming": 1}
_DAY_WORDS = {
    "today": 0, "tonight": 0, "this morning": 0, "this afternoon": 0, "this evening": 0,
    "yesterday": -1, "last night": -1, "tomorrow": 1, "the day before yesterday": -2,
}  # fmt: skip

Handler = Callable[[re.Match[str], datetime], TimeRange | None]


def _amount(text: str) -> int:
    return int(text) if text.isdigit() else _NUMBER_WORDS.get(text, 1)


def _day_word(m: re.Match[str], ref: datetime) -> TimeRange | None:
    return day_range(ref, _DAY_WORDS[m.group(0).lower()])


def _relative_unit(m: re.Match[str], ref: datetime) -> TimeRange | None:
    offset = _OFFSETS[m.group(1).lower()]
    unit = m.group(2).lower()
    if unit == "week":
        return week_range(ref, offset)
    if unit == "weekend":
        start = week_range(ref, offset).start
        return TimeRange(day_range(start, 5).start, day_range(start, 7).start)
    if unit == "month":
        return relative_month(ref, offset)
    return year_range(ref.year + offset)


def _ago(m: re.Match[str], ref: datetime) -> TimeRange | None:
    return span_ago(ref, _amount(m.group(1).lower()), m.group(2).lower())


def _weekday(m: re.Match[str], ref: datetime) -> TimeRange | None:
    which = {"past": "last", "previous": "last", "coming": "next"}.get(m.group(1).lower())
    return weekday_range(ref, WEEKDAYS[m.group(2).lower()], which or m.group(1).lower())


def _season(m: re.Match[str], ref: datetime) -> TimeRange | None:
    return season_range(ref, m.group(2).lower(), _OFFSETS[m.group(1).lower()])


def _day_month_year(m: re.Match[str], ref: datetime) -> TimeRange | None:
    day, month, year = m.group("d1") or m.group("d2"), m.group("m1") or m.group("m2"), m.group("y")
    number = MONTHS[month.lower()]
    if year:
        return exact_date(int(year), number, int(day))
    return nearest_date(ref, number, int(day))


def _month_year(m: re.Match[str], ref: datetime) -> TimeRange | None:
    month = MONTHS[m.group(1).lower()]
    return month_range(int(m.group(2)), month) if m.group(2) else nearest_month(ref, month)


def _iso(m: re.Match[str], ref: datetime) -> TimeRange | None:
    return exact_date(int(m.group(1)), int(m.group(2)), int(m.group(3)))


def _year(m: re.Match[str], ref: datetime) -> TimeRange | None:
    return year_range(int(m.group(1)))


_ORD = r"(?:st|nd|rd|th)?"
# Order matters: the most specific pattern claims its text first.
_PATTERNS: tuple[tuple[re.Pattern[str], Handler], ...] = (
    (re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"), _iso),
    (
        re.compile(
            rf"\b(?:(?P<d1>\d{{1,2}}){_ORD}\s+(?:of\s+)?(?P<m1>{_MONTH})|(?P<m2>{_MONTH})\.?\s+"
            rf"(?P<d2>\d{{1,2}}){_ORD}(?!\d))(?:,?\s*(?P<y>(?:19|20)\d{{2}}))?\b",
            re.I,
        ),
        _day_month_year,
    ),
    (re.compile(rf"\b({_MONTH_FULL})\b(?:,?\s+((?:19|20)\d{{2}}))?", re.I), _month_year),
    (
        re.compile(
            r"\b(the day before yesterday|yesterday|today|tonight|tomorrow|last night|"
            r"this (?:morning|afternoon|evening))\b",
            re.I,
        ),
        _day_word,
    ),  # fmt: skip
    (re.compile(rf"\b({_AMOUNT})\s+(day|week|month|year)s?\s+(?:ago|back)\b", re.I), _ago),
    (re.compile(rf"\b(last|this|next|past|previous|coming)\s+({_WEEKDAY})\b", re.I), _weekday),
    (re.compile(rf"\b(last|this|next|past)\s+({_SEASON})\b", re.I), _season),
    (
        re.compile(r"\b(last|this|next|past|previous|coming)\s+(week|weekend|month|year)\b", re.I),
        _relative_unit,
    ),
    (re.compile(r"\b((?:19|20)\d{2})\b"), _year),
)
# "may" is also a verb: lower-case "may" alone, and "May I ...", are not the month.
_MAY_ASKS = re.compile(r"(?<!\s)\s+(?:i|we|you|he|she|they|it|be|have)\b", re.I)


def parse_english(text: str, ref: datetime) -> list[TimeRange]:
    """Every English time expression in `text`, resolved relative to `ref`."""
    found: list[TimeRange] = []
    taken = [False] * len(text)
    for pattern, handler in _PATTERNS:
        for m in pattern.finditer(text):
            if any(taken[m.start() : m.end()]) or _is_may_verb(text, m):
                continue
            resolved = handler(m, ref)
            if resolved is not None:
                found.append(resolved)
                taken[m.start() : m.end()] = [True] * (m.end() - m.start())
    return found


def _is_may_verb(text: str, m: re.Match[str]) -> bool:
    if m.group(0) == "may":
        return True
    return m.group(0) == "May" and bool(_MAY_ASKS.match(text, m.end()))
