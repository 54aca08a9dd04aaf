"""Chinese time expressions (昨天, 上周, 三天前, 2023年5月) resolved against a reference moment."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime

from memory.recall.temporal_units import (
    TimeRange,
    day_range,
    exact_date,
    month_range,
    nearest_date,
    nearest_month,
    relative_month,
    span_ago,
    week_range,
    weekday_range,
    year_range,
)

_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
           "八": 8, "九": 9, "几": 3}  # fmt: skip
# Runs start where a number starts: a bare `[0-9]+` retries from every digit of a long run.
_NUM = r"(?<![0-9])[0-9]+|(?<![零一二两三四五六七八九十几])[零一二两三四五六七八九十几]+"
# In dates "几" is a question ("几月" = which month), not a number.
_DATE_NUM = r"[0-9]{1,2}|[一二三四五六七八九十]{1,3}"
_DAY_WORDS = {"前天": -2, "昨天": -1, "昨日": -1, "昨晚": -1, "今天": 0, "今日": 0, "今晚": 0,
              "今早": 0, "明天": 1, "明日": 1, "后天": 2}  # fmt: skip
_PREFIX = {"上": -1, "这": 0, "本": 0, "下": 1}
_YEAR_WORDS = {"前年": -2, "去年": -1, "今年": 0, "明年": 1, "后年": 2}
_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}

Handler = Callable[[re.Match[str], datetime], TimeRange | None]


def chinese_number(text: str) -> int:
    """Arabic or Chinese numerals up to 99 (十二 -> 12, 二十 -> 20, 两 -> 2)."""
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        return (_DIGITS.get(tens, 1) if tens else 1) * 10 + (_DIGITS.get(ones, 0) if ones else 0)
    value = 0
    for ch in text:
        value = value * 10 + _DIGITS.get(ch, 0)
    return value


def _full_date(m: re.Match[str], ref: datetime) -> TimeRange | None:
    year, month, day = m.group(1), chinese_number(m.group(2)), m.group(3)
    if day:
        if year:
            return exact_date(int(year), month, chinese_number(day))
        return nearest_date(ref, month, chinese_number(day))
    if not 1 <= month <= 12:
        return None
    return month_range(int(year), month) if year else nearest_month(ref, month)


def _year(m: re.Match[str], ref: datetime) -> TimeRange | None:
    return year_range(int(m.group(1)))


def _day_word(m: re.Match[str], ref: datetime) -> TimeRange | None:
    return day_range(ref, _DAY_WORDS[m.group(0)])


def _year_word(m: re.Match[str], ref: datetime) -> TimeRange | None:
    return year_range(ref.year + _YEAR_WORDS[m.group(0)])


def _weekday(m: re.Match[str], ref: datetime) -> TimeRange | None:
    which = {"上": "last", "下": "next"}.get(m.group(1), "this")
    return weekday_range(ref, _WEEKDAY[m.group(2)], which)


def _week(m: re.Match[str], ref: datetime) -> TimeRange | None:
    return week_range(ref, _PREFIX[m.group(1)])


def _month(m: re.Match[str], ref: datetime) -> TimeRange | None:
    return relative_month(ref, _PREFIX[m.group(1)])


def _ago(m: re.Match[str], ref: datetime) -> TimeRange | None:
    unit = {"天": "day", "日": "day", "周": "week", "星期": "week", "礼拜": "week", "月": "month",
            "年": "year"}[m.group(2)]  # fmt: skip
    return span_ago(ref, chinese_number(m.group(1)), unit)


_PATTERNS: tuple[tuple[re.Pattern[str], Handler], ...] = (
    (re.compile(rf"({_NUM})\s*个?\s*(天|日|周|星期|礼拜|月|年)\s*(?:以前|之前|前)"), _ago),
    (
        re.compile(
            rf"(?:((?:19|20)\d{{2}})\s*年\s*)?({_DATE_NUM})\s*月(?:\s*({_DATE_NUM})\s*[日号])?"
        ),
        _full_date,
    ),  # fmt: skip
    (re.compile(r"((?:19|20)\d{2})\s*年"), _year),
    (re.compile(r"(上|这|本|下)?(?:个)?(?:周|星期|礼拜)([一二三四五六日天])"), _weekday),
    (re.compile(r"(上|这|本|下)(?:个)?(?:周|星期|礼拜)"), _week),
    (re.compile(r"(上|这|本|下)(?:个)?月"), _month),
    (re.compile("|".join(_DAY_WORDS)), _day_word),
    (re.compile("|".join(_YEAR_WORDS)), _year_word),
)


def parse_chinese(text: str, ref: datetime) -> list[TimeRange]:
    """Every Chinese time expression in `text`, resolved relative to `ref`."""
    found: list[TimeRange] = []
    taken = [False] * len(text)
    for pattern, handler in _PATTERNS:
        for m in pattern.finditer(text):
            if any(taken[m.start() : m.end()]):
                continue
            resolved = handler(m, ref)
            if resolved is not None:
                found.append(resolved)
                taken[m.start() : m.end()] = [True] * (m.end() - m.start())
    return found
