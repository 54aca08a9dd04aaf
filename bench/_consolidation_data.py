"""Synthetic episodic memories for the consolidation benchmark (deterministic per seed).

Each user gets 100 episodes: 4 recurring themes stated 5 times each on different days (which
consolidation should distil into 4 long-term memories), 10 past their TTL, 10 stale and
unimportant (forgotten by decay) and 60 one-off events.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from memory.types import Category, NewMemory, Origin

THEMES = [
    [
        "I prefer TypeScript for code examples",
        "Use TypeScript when you show me code",
        "My code samples should be in TypeScript",
        "Please write the examples in TypeScript",
        "I like TypeScript examples better than Python ones",
    ],
    [
        "Keep your answers short",
        "I prefer short answers",
        "Please keep the replies short",
        "Short answers work best for me",
        "Answer briefly and keep it short",
    ],
    [
        "I prefer tea in the morning",
        "In the morning I'd rather have tea",
        "Tea is what I want in the morning",
        "I like a cup of tea in the morning",
        "My morning drink should be tea",
    ],
    [
        "Show me an example before the explanation",
        "I like to see examples first",
        "Start with an example, then explain",
        "Examples first, explanations after",
        "Give me the example before you explain it",
    ],
    [
        "Use metric units please",
        "I prefer metric units",
        "Give distances in kilometres",
        "Always use metric units for me",
        "Metric units, not imperial",
    ],
    [
        "Put the executive summary first in reports",
        "I want the summary first in every report",
        "Reports should open with the summary",
        "Lead reports with a short summary",
        "Start each report with the executive summary",
    ],
    [
        "Schedule my meetings in the afternoon",
        "I prefer afternoon meetings",
        "Meetings work best for me after lunch",
        "Please book meetings in the afternoon",
        "Afternoon slots are best for my meetings",
    ],
    [
        "I prefer window seats on flights",
        "Book me a window seat when I fly",
        "On planes I like the window seat",
        "Window seat please for my flights",
        "Always get me a window seat on the plane",
    ],
]
_PEOPLE = ["Maria", "Tom", "Aiko", "Lars", "Priya", "Omar", "Chen", "Sofia", "Ivan", "Nora"]
_PLACES = ["Berlin", "Lisbon", "Osaka", "Denver", "Nairobi", "Oslo", "Lima", "Hanoi"]
_EVENTS = [
    "had lunch with",
    "reviewed the budget with",
    "called",
    "met",
    "planned a trip with",
    "debugged the importer with",
    "interviewed",
    "played chess with",
]


def _one_off(rng: random.Random, i: int) -> str:
    return (
        f"On day {i} I {rng.choice(_EVENTS)} {rng.choice(_PEOPLE)} in "
        f"{rng.choice(_PLACES)} about item {rng.randint(100, 999)}"
    )


def _fact(text: str, days_ago: float, now: datetime, **kw: object) -> NewMemory:
    return NewMemory(text, category=Category.FACT, occurred_at=now - timedelta(days=days_ago), **kw)  # type: ignore[arg-type]


def user_memories(seed: int, now: datetime | None = None) -> list[NewMemory]:
    """The 100 episodes of one user."""
    rng = random.Random(seed)
    now = now or datetime.now(UTC)
    items = [
        NewMemory(
            text,
            category=Category.PREFERENCE,
            origin=Origin.INFERRED,
            ttl_days=90,
            occurred_at=now - timedelta(days=1 + 3 * j + rng.random()),
        )
        for theme in rng.sample(THEMES, 4)
        for j, text in enumerate(theme)
    ]
    items += [
        _fact(
            f"Temporary access code {rng.randint(1000, 9999)} for job {i}", 10 + i, now, ttl_days=2
        )
        for i in range(10)
    ]
    items += [
        _fact(_one_off(rng, 1000 + i), 200 + i, now, importance=0.3, ttl_days=None)
        for i in range(10)
    ]
    items += [
        _fact(_one_off(rng, i), rng.uniform(0, 60), now, importance=0.5, ttl_days=90)
        for i in range(60)
    ]
    return items
