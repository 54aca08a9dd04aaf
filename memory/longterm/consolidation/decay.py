"""Forgetting: TTL expiry and decay by relevance, as pure functions.

relevance = time_decay·0.6 + importance·0.3 + access_boost·0.1, with
time_decay = 0.5 ** (days / half-life) and access_boost = min(access_count·0.05, 0.3);
a memory whose relevance falls below the threshold (0.2) is removed. Pinned memories never are.
Recency weighs most because an unused memory should fade; importance alone (≥ 0.67) keeps
one; being recalled often adds at most 0.03.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from memory.longterm.consolidation.types import ConsolidationPolicy
from memory.types import MemoryRecord

_SECONDS_PER_DAY = 86_400.0


def relevance(
    age_days: float, importance: float, access_count: int, half_life_days: float
) -> float:
    """The relevance score in [0, 1] (the formula above)."""
    time_decay = 0.5 ** (max(age_days, 0.0) / max(half_life_days, 1e-3))
    access_boost = min(max(access_count, 0) * 0.05, 0.3)
    return float(time_decay * 0.6 + importance * 0.3 + access_boost * 0.1)


def age_days(record: MemoryRecord, now: datetime) -> float:
    """Days since the memory was last relevant: when it happened or was last recalled.

    Measuring only from the memory's timestamp would forget what is old but in use; counting
    from the last recall as well keeps
    a memory the agent used yesterday from being forgotten today for being old.
    """
    last = record.occurred_at
    if record.last_accessed is not None and record.last_accessed > last:
        last = record.last_accessed
    return (now - last).total_seconds() / _SECONDS_PER_DAY


def record_relevance(record: MemoryRecord, now: datetime, policy: ConsolidationPolicy) -> float:
    """`relevance()` of one record, with its kind's half-life."""
    half_life = float(policy.half_life_days.get(record.kind, 30.0))
    return relevance(age_days(record, now), record.importance, record.access_count, half_life)


def is_expired(record: MemoryRecord, now: datetime) -> bool:
    """True when the memory's TTL has passed (pinned memories never expire)."""
    return not record.pinned and record.expires_at is not None and record.expires_at <= now


def expired(records: Iterable[MemoryRecord], now: datetime) -> list[MemoryRecord]:
    """The memories past their TTL."""
    return [r for r in records if is_expired(r, now)]


def decayed(
    records: Iterable[MemoryRecord], now: datetime, policy: ConsolidationPolicy
) -> list[tuple[MemoryRecord, float]]:
    """The unpinned memories whose relevance is below the threshold, with their relevance."""
    out: list[tuple[MemoryRecord, float]] = []
    for record in records:
        if record.pinned:
            continue
        score = record_relevance(record, now, policy)
        if score < policy.decay_threshold:
            out.append((record, score))
    return out


def purge_cutoff(now: datetime, policy: ConsolidationPolicy) -> datetime:
    """Rows expired before this instant are deleted for good (the rollback window has passed)."""
    return now - timedelta(days=policy.purge_after_days)
