"""What ranking derives from a memory's text, computed once and kept beside the row.

Indexing a memory for search means tokenising and stemming its text and context, parsing
the times it names and checking whether it is only greetings and thanks: ~0.3 ms per memory,
which was ~78 % of an L2 recall's time when every query re-indexed its ~200 candidates. These
`Features` are computed once (when this process writes a memory, when a recall first meets it,
or by `backfill_features`), stored in the row's `recall_features` column and decoded by later
queries at a small fraction of that cost.

A stored value names the text it was computed from (`key`: a digest of the index text, the
context, the time it happened and `FORMAT`), so features of an edited memory, or computed by
an older tokeniser, are never used: they are recomputed. Features used or computed are the
ones `UserIndex` would compute itself, so L1 and L2 rank identically.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from memory.recall.lexical import tokenize
from memory.recall.relevance import is_chatter
from memory.recall.temporal import event_ranges, has_time_word
from memory.recall.temporal_units import TimeRange, as_utc

# Bump when tokenisation or time parsing changes, or a feature is added: stored features then
# stop matching. 5: `chatter`.
FORMAT = 5
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)


@dataclass(frozen=True, slots=True)
class Features:
    """What ranking reads of a memory's text, besides its vector.

    Its index tokens, context tokens, event times, whether its text dates it, and whether it
    is only greetings and thanks (`is_chatter`: ranked down).
    """

    tokens: list[str]
    context_tokens: list[str]
    events: list[TimeRange]  # [the day it happened, *times its own words name]
    dated: bool
    chatter: bool


def features_key(text: str, context: str, occurred_at: datetime) -> str:
    """A digest of everything the features depend on (16 hex characters)."""
    stamp = (as_utc(occurred_at) - _EPOCH) // _US
    raw = f"{FORMAT}\x00{stamp}\x00{text}\x00{context}".encode("utf-8", "surrogatepass")
    return hashlib.blake2b(raw, digest_size=8).hexdigest()


def compute_features(text: str, own: str, context: str, occurred_at: datetime) -> Features:
    """The features of a memory: `text` is its index text, `own` the same without a speaker."""
    events = event_ranges(own, as_utc(occurred_at))
    return Features(
        tokens=tokenize(text),
        context_tokens=tokenize(context),
        events=events,
        dated=len(events) > 1 or has_time_word(own),
        chatter=is_chatter(own),
    )


def encode(features: Features, key: str) -> str:
    """The JSON stored in `recall_features` (times as integer microseconds: exact)."""
    return json.dumps(
        {
            "k": key,
            "t": features.tokens,
            "c": features.context_tokens,
            "e": [[(r.start - _EPOCH) // _US, (r.end - _EPOCH) // _US] for r in features.events],
            "d": features.dated,
            "h": features.chatter,
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )


def decode(stored: object, key: str) -> Features | None:
    """Stored features if they were computed from the text `key` names; else None."""
    if stored is None:
        return None
    try:
        data: Any = json.loads(stored) if isinstance(stored, str | bytes) else stored
        if not isinstance(data, dict) or data.get("k") != key:
            return None
        events = [TimeRange(_EPOCH + int(s) * _US, _EPOCH + int(e) * _US) for s, e in data["e"]]
        tokens, context = data["t"], data["c"]
        if not all(isinstance(t, str) for t in (*tokens, *context)):
            return None
        return Features(list(tokens), list(context), events, bool(data["d"]), bool(data["h"]))
    except (ValueError, TypeError, KeyError, OverflowError):
        return None  # damaged or foreign: recompute


__all__ = ["FORMAT", "Features", "compute_features", "decode", "encode", "features_key"]
