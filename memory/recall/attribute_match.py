"""A question that asks for an attribute's value finds the memory that sets it.

"Where do I live?" and "We relocated to Hamburg in December." share no word, and a small
embedding model puts them far apart (MiniLM: cosine 0.19, under the relevance floor), yet the
second is the answer. `memory.attributes` reads which attribute a question asks for and which
one a statement sets (residence, employer, editor, drink, a meeting's time, a project's
decision, English and Chinese); a recalled memory that sets an asked attribute passes the floor
and is placed above the others (the newest first when several still hold, for a current
question).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt

from memory.attribute_meaning import MAX_CHARS, SlotReader
from memory.attributes import (
    about_someone_else,
    asked_attributes,
    not_current,
    same_attribute,
    settings,
)
from memory.recall.history import PastQuestion, held_from, past_question, pick
from memory.types import MemoryRecord, Relevance, ScoreBreakdown

MARGIN = 1e-3
"""How far above the best other result the lifted memories start."""


# An assistant or a tool asks about "the user" ("Which editor does the user use now?",
# "用户现在住在哪？"): for reading what is asked, that is the first person.
_THE_USERS = re.compile(r"\b(?:the|this) user's\b", re.I)
_THE_USER = re.compile(r"\b(?:the|this) user\b", re.I)


def as_the_user_asks(question: str) -> str:
    """The question as the user would ask it: "the user's team" -> "my team", 用户 -> 我."""
    text = _THE_USER.sub("I", _THE_USERS.sub("my", question))
    return text.replace("用户", "我")


# A question for a value of the user's ("where do I work?", "what car do I drive?", "我现在开
# 什么车？"), not about the world or how to do something ("How do I reverse a linked list?",
# "我怎么学Python", "what should I cook tonight?"): a question word for a thing, a place, a
# person, a time or an amount.
_ASKS_MINE = re.compile(
    r"^\W{0,3}(?:what|which|where|who|whose|when|how (?:much|many|far|long|often|old))\b"
    r"(?!\W{1,3}(?:\w{1,20}\W{1,3})?(?:should|could|would|can|shall|might)\b)"
    r"(?:\W{1,3}\w{1,20}){0,6}?\W{1,3}(?:i|my|me|we|our|us)\b"
    r"|我[^？?。]{0,12}?(?:什么|哪|谁|几|多少)|(?:什么|哪|谁|几|多少)[^？?。]{0,12}?我",
    re.I,
)


@dataclass(frozen=True, slots=True)
class Meaning:
    """What reading attributes by meaning needs at recall.

    The reader, and the vectors recall has already computed: the query's and each candidate
    memory's.
    """

    reader: SlotReader
    query_vector: npt.NDArray[np.float32]
    vectors: Mapping[str, npt.NDArray[np.float32]]


def _sets(record: MemoryRecord, asked: frozenset[str]) -> str | None:
    for found in settings(record.content):
        # "schedule:sprint planning" answers "schedule:planning": a shared thing word is enough.
        if not found.negative and any(same_attribute(found.attribute, a) for a in asked):
            return found.attribute
    return None


def asks_for_an_attribute(query: str, reader: SlotReader | None) -> bool:
    """Whether a question asks for an attribute's value ("2017年我开的是什么车？").

    Read by the patterns and, with `reader`, by meaning.
    """
    query = as_the_user_asks(query)
    return bool(asked_attributes(query) or _asked_by_meaning(query, reader))


def _asked_by_meaning(
    query: str, reader: SlotReader | None, vector: npt.NDArray[np.float32] | None = None
) -> frozenset[str]:
    if reader is None or len(query) > MAX_CHARS or not _ASKS_MINE.search(query):
        return frozenset()
    if about_someone_else(query):
        return frozenset()
    return frozenset(reader.slots(query, vector=vector))


def _sets_by_meaning(
    mid: str, record: MemoryRecord, asked: frozenset[str], meaning: Meaning | None
) -> str | None:
    if meaning is None or not asked or mid not in meaning.vectors:
        return None
    text = record.content
    # The examples are single statements; a long memory is read by the patterns alone.
    if len(text) > MAX_CHARS or about_someone_else(text) or not_current(text):
        return None
    found = asked & set(meaning.reader.slots(text, vector=meaning.vectors[mid]))
    return min(found) if found else None


def promote(
    query: str,
    hits: Sequence[tuple[str, ScoreBreakdown]],
    records: Mapping[str, MemoryRecord],
    meaning: Meaning | None = None,
    now: datetime | None = None,
) -> list[tuple[str, ScoreBreakdown]]:
    """`hits` (id, breakdown), best first, with the memories that set an asked attribute first.

    The attribute is read by `memory.attributes`' patterns, and with `meaning` also by
    `memory.attribute_meaning` (a question and a memory that no pattern reads: "Where do I
    work?", "I've been at Zalando since June").
    """
    if not hits:
        return []
    now = now or datetime.now(UTC)
    query = as_the_user_asks(query)
    asked = asked_attributes(query)
    # Each memory that sets an asked attribute, by the patterns' reading or by meaning: a
    # newer value only meaning reads must be lifted beside an older one a pattern reads.
    by_meaning = (
        _asked_by_meaning(query, meaning.reader, meaning.query_vector) if meaning else frozenset()
    )
    matched = {
        mid: attribute
        for mid, _ in hits
        if mid in records
        and (
            attribute := (_sets(records[mid], asked) if asked else None)
            or _sets_by_meaning(mid, records[mid], by_meaning, meaning)
        )
        is not None
    }
    if not matched:
        return list(hits)
    top = max(b.total for _, b in hits)
    order = _order(query, [(mid, b) for mid, b in hits if mid in matched], records, now)
    out = []
    for mid, b in hits:
        if mid in matched:
            # Each lifted memory lands above every other result, in the order `_order` gives.
            lift = top - b.total + MARGIN * (len(order) - order.index(mid))
            b = replace(b, attribute=lift, relevance=_passed(b.relevance, matched[mid]))
        out.append((mid, b))
    return sorted(out, key=lambda hit: hit[1].total, reverse=True)


def _order(
    query: str,
    lifted: list[tuple[str, ScoreBreakdown]],
    records: Mapping[str, MemoryRecord],
    now: datetime,
) -> list[str]:
    """The order of the lifted memories: newest statement first for a current question.

    Two values may both still be active (after an ambiguous conflict, a later statement the
    write path did not read as an update, or in a store that keeps every turn); a question
    about the past puts the one that held at the asked time first (`_held_then`; an update's
    own chain is followed by `memory.recall.history`). Statements of the same day keep the
    ranking's order: they are not a value and its successor ("My car's brakes squeal" and "I
    drive a Golf", said together).
    """
    rank = {mid: i for i, (mid, _) in enumerate(lifted)}
    question = past_question(query, now)
    if question is not None:
        chosen = _held_then(question, [records[mid] for mid, _ in lifted], now)
        return sorted(rank, key=lambda mid: (mid != chosen, rank[mid]))
    day = {mid: records[mid].occurred_at.date().toordinal() for mid, _ in lifted}
    return sorted(rank, key=lambda mid: (-day[mid], rank[mid]))


def _held_then(question: PastQuestion, found: Sequence[MemoryRecord], now: datetime) -> str | None:
    """Which of several values of one attribute, all still stored, the past question asks for.

    When no update linked them (the later statement was stored beside the earlier one), the
    values said on different days are read as a chain anyway: each held from the day it was
    said until the next one was said. None when they do not make such a chain (fewer than two
    days) or the question asks for the newest.
    """
    newest_first = sorted(found, key=held_from, reverse=True)
    days = {held_from(r).date() for r in newest_first}
    if len(days) < 2 or len(days) < len(newest_first):
        return None  # said together, they are not a value and its successor
    earlier = [
        replace(record, valid_to=min(record.valid_to or held_from(later), held_from(later)))
        for later, record in itertools.pairwise(newest_first)
    ]
    chosen = pick(question, newest_first[0], earlier, now)
    return None if chosen is None else chosen.id


def _passed(relevance: Relevance | None, attribute: str) -> Relevance | None:
    if relevance is None or relevance.passed:
        return relevance
    why = f"sets the attribute the question asks for ({attribute}); {relevance.reason}"
    return replace(relevance, passed=True, reason=why)
