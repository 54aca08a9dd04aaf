"""Time expressions in queries and memories ("last week", "in May", "2023", "上周", "三天前").

Two signals feed the ranking's temporal term:

- a query that names a time ("what did I decide last week?") is resolved relative to `now` and
  matched against when each memory happened: its `occurred_at`, and any time its own text names,
  resolved relative to `occurred_at` ("yesterday" said on 8 May is 7 May);
- a query that asks for a time ("when did ...", "什么时候") favours memories that state one: on
  LoCoMo 83% of the evidence turns for "when" questions contain a time expression, against 17%
  of all turns.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from datetime import datetime

from memory.recall.temporal_en import parse_english
from memory.recall.temporal_units import TimeRange, as_utc, day_range
from memory.recall.temporal_zh import parse_chinese

__all__ = [
    "TimeRange",
    "asks_when",
    "closeness",
    "event_ranges",
    "has_time_word",
    "mentions_time",
    "parse_time",
    "query_ranges",
    "statement_start",
    "time_match",
    "time_question",
]

_CJK = re.compile(r"[\u4e00-\u9fff]")
_ASKS_WHEN = re.compile(
    r"^\s*(?:when|since when|until when)\b|\b(?:what|which)\s+(?:time|date|day|days|month|year|"
    r"week|weekend)\b|\bhow\s+long\b|\bhow\s+many\s+(?:days|weeks|months|years)\b|\bwhat\s+age\b"
    r"|什么时候|何时|哪天|哪一天|哪年|哪一年|哪个月|几月|几号|多久|多长时间|哪一周|几点",
    re.IGNORECASE,
)
# Words that date an utterance without naming a resolvable range ("recently", "soon").
_TIME_WORDS = re.compile(
    r"\b(?:ago|recently|lately|soon|later|earlier|since|weekend|weekends|tonight|morning|"
    r"afternoon|evening|night|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"(?:last|next|this|past)\s+(?:time|few|couple|days|weeks|months|years)|"
    r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|few|couple of)\s+"
    r"(?:days?|weeks?|months?|years?|nights?|hours?|minutes?))\b"
    r"|最近|刚才|刚刚|以前|之前|以后|周末|早上|晚上|上午|下午"
    # A duration answers "how long" as a date answers "when": "three nights", "两个小时". The
    # lookbehind starts a numeral run only at its beginning: without it a long run of numerals
    # with no unit after it is rescanned from every position (20,000 characters took 12 s).
    r"|(?<![一二两三四五六七八九十几半\d])[一二两三四五六七八九十几半\d]+\s*个?"
    r"(?:晚|夜|天|小时|钟头|分钟|星期|周|月|年)",
    re.IGNORECASE,
)

# Day words that place the asking, not the memory: "what did I say today about my car" asks
# about the car, and "today" resolved against `now` only lifted whatever was recent.
_DEICTIC = re.compile(
    r"\b(?:the\s+day\s+before\s+yesterday|yesterday|today|tonight|tomorrow|last\s+night|"
    r"this\s+(?:morning|afternoon|evening)|right\s+now)\b"
    r"|前天|昨天|昨日|昨晚|今天|今日|今晚|今早|明天|明日|后天|上次|上一次|刚才|刚刚",
    re.IGNORECASE,
)
# Ordering questions ask about time as much as "when" does: "which did I buy first, A or B",
# "did I move before or after the wedding", "哪个先".
_ASKS_ORDER = re.compile(
    r"\b(?:which|who|what)\b[^?.!\n]{0,80}?\b(?:first|earlier|last|most\s+recently)\b"
    r"|\b(?:before\s+or\s+after|after\s+or\s+before)\b"
    r"|\bhow\s+(?:long|many\s+(?:days|weeks|months|years))\s+(?:ago|before|after|since|had|have|"
    r"passed|did)\b"
    r"|先还是|哪个先|谁先|之前还是之后|以前还是以后|多久以前|多久之前",
    re.IGNORECASE,
)


def parse_time(text: str, now: datetime) -> list[TimeRange]:
    """Every time expression in `text` (English and Chinese), resolved relative to `now`."""
    ref = as_utc(now)
    ranges = parse_english(text, ref)
    if _CJK.search(text):
        ranges.extend(parse_chinese(text, ref))
    return ranges


def asks_when(query: str) -> bool:
    """True when the query asks for a time or a duration ("when", "how long", "什么时候")."""
    return bool(_ASKS_WHEN.search(query))


def query_ranges(query: str, now: datetime) -> list[TimeRange]:
    """The times a query places its memories in, resolved relative to `now`.

    A question that asks for a time keeps every expression it names; otherwise day words that
    only say when the question is asked ("today", "昨天", "上次") are left out, so that a
    question that merely mentions today does not rank memories by how recent they are.
    """
    if asks_when(query) or _ASKS_ORDER.search(query):
        return parse_time(query, now)
    return parse_time(_DEICTIC.sub(" ", query), now)


def time_question(query: str, now: datetime | None = None) -> bool:
    """True when the question is about when its memories happened.

    It asks for a time or a duration ("when", "how long ago", "多久以前"), asks which came
    first ("before or after"), or names a time other than the day it is asked ("last month",
    "in May", "上个月").
    """
    if asks_when(query) or _ASKS_ORDER.search(query):
        return True
    return bool(query_ranges(query, now or datetime(2000, 1, 1)))


def has_time_word(text: str) -> bool:
    """True when the text has a dating word that names no range ("recently", "for 4 years")."""
    return bool(_TIME_WORDS.search(text))


def mentions_time(text: str, *, at: datetime | None = None) -> bool:
    """True when the text dates something: a resolvable expression or a time word."""
    return has_time_word(text) or bool(parse_time(text, at or datetime(2000, 1, 1)))


def event_ranges(text: str, occurred_at: datetime) -> list[TimeRange]:
    """When a memory's events happened: the day it was recorded plus the times its text names."""
    return [day_range(occurred_at), *parse_time(text, occurred_at)]


def statement_start(text: str, said_at: datetime) -> datetime:
    """When a stated fact began to hold: the earliest time its own words name, else when said.

    "I moved to Munich last month" said on 15 June began on 1 May; "since 2023" on 1 January
    2023; "from next week" on that Monday; a statement with no time words, when it was said.
    A day word about the asking ("today") dates it the day it was said.
    """
    ranges = parse_time(text, said_at)
    return min((r.start for r in ranges), default=as_utc(said_at))


def time_match(query_ranges: Sequence[TimeRange], memory_ranges: Sequence[TimeRange]) -> float:
    """How well a memory's times fit the query's, in [0, 1]: 1 on overlap, decaying with the gap.

    The decay scale grows with the query range (a day off matters for "yesterday", hardly for
    "2023"): exp(-gap / (1 + width/4)) days.
    """
    best = 0.0
    for q in query_ranges:
        for m in memory_ranges:
            best = max(best, closeness(q.gap_days(m), q.days))
            if best >= 1.0:
                return 1.0
    return best


def closeness(gap_days: float, query_days: float) -> float:
    """exp(-gap / (1 + query_days/4)): the shared decay of `time_match` and the index."""
    return math.exp(-gap_days / (1.0 + query_days / 4.0))
