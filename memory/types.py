"""The memory data model shared by storage, ranking, the gate and consolidation.

An episodic record says what happened, when and with what result; a long-term entry adds how
the system came to believe it (origin, confidence, version).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

_SCOPE_PART = re.compile(r"[A-Za-z0-9_.@:\-]{1,128}")


class ScopeError(ValueError):
    """A tenant or user id is missing or malformed."""


@dataclass(frozen=True, slots=True)
class Scope:
    """The isolation key every read and write carries: tenant_id + user_id.

    There is deliberately no way to build an empty or wildcard scope: an unscoped query cannot
    be expressed through the storage API.
    """

    tenant_id: str
    user_id: str

    def __post_init__(self) -> None:
        for name in ("tenant_id", "user_id"):
            value = getattr(self, name)
            if not isinstance(value, str) or not _SCOPE_PART.fullmatch(value):
                raise ScopeError(
                    f"{name} must be 1-128 characters of letters, digits or _.@:- (got {value!r})"
                )

    @property
    def key(self) -> str:
        """A stable string key for caches and locks."""
        return f"{self.tenant_id}/{self.user_id}"


class MemoryKind(StrEnum):
    """What a memory is: an event, or one of the long-term subtypes."""

    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PROCEDURAL = "procedural"
    PREFERENCE = "preference"

    @property
    def layer(self) -> str:
        """The Chroma collection layer the kind is indexed in."""
        return "episodic" if self is MemoryKind.EPISODIC else "longterm"


class Source(StrEnum):
    """Where the content came from."""

    CHAT = "chat"
    TOOL = "tool"
    SYSTEM = "system"
    CONSOLIDATION = "consolidation"


class Origin(StrEnum):
    """How the system came to believe it."""

    EXPLICIT = "explicit"
    INFERRED = "inferred"
    LEARNED = "learned"


class Status(StrEnum):
    """Lifecycle of a row; only ACTIVE rows are ever recalled."""

    ACTIVE = "active"
    SUPERSEDED = "superseded"
    EXPIRED = "expired"
    DELETED = "deleted"
    PENDING_APPROVAL = "pending_approval"


class Category(StrEnum):
    """The gate's classes: what is worth remembering, and noise."""

    PREFERENCE = "preference"
    CONSTRAINT = "constraint"
    DECISION = "decision"
    FAILURE_LESSON = "failure_lesson"
    FACT = "fact"
    NOISE = "noise"


@dataclass(slots=True)
class NewMemory:
    """A memory about to be written (already gated and redacted)."""

    content: str
    kind: MemoryKind = MemoryKind.EPISODIC
    source: Source = Source.CHAT
    origin: Origin = Origin.EXPLICIT
    category: Category = Category.FACT
    importance: float = 0.5
    confidence: float = 0.7
    ttl_days: float | None = 30.0
    occurred_at: datetime | None = None
    pinned: bool = False
    status: Status = Status.ACTIVE
    # Episodic structure: what happened, around what, with what result.
    context: str = ""
    outcome: str = ""
    # Where it came from: thread id, message ids, agent id, benchmark turn ids ...
    provenance: dict[str, Any] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)


@dataclass(slots=True)
class MemoryRecord:
    """A row of the `memories` table, as read back."""

    id: str
    tenant_id: str
    user_id: str
    kind: MemoryKind
    content: str
    source: Source
    origin: Origin
    category: Category
    importance: float
    confidence: float
    created_at: datetime
    occurred_at: datetime
    expires_at: datetime | None
    access_count: int
    last_accessed: datetime | None
    status: Status
    superseded_by: str | None
    provenance: dict[str, Any]
    content_hash: str
    version: int
    indexed_at: datetime | None
    pinned: bool = False
    context: str = ""
    outcome: str = ""
    tags: list[str] = field(default_factory=list)
    # When the fact was true, where an update set it: `valid_from` None means from
    # `occurred_at`; `valid_to` None means still true (a replaced value has one).
    valid_from: datetime | None = None
    valid_to: datetime | None = None

    @property
    def scope(self) -> Scope:
        """The record's isolation key."""
        return Scope(self.tenant_id, self.user_id)


@dataclass(frozen=True, slots=True)
class Relevance:
    """Whether a recalled memory passed the absolute relevance floor, and why."""

    passed: bool
    cosine: float  # raw cosine of query and memory vectors
    words: float  # share of the query's content words the memory (or its context) contains
    reason: str
    z: float = 0.0  # standard deviations above the query's mean cosine over the user's memories
    evidence: float | None = None  # the query-level calibrated score, when one was computed

    def as_dict(self) -> dict[str, object]:
        """For JSON and `--explain`."""
        return {
            "passed": self.passed,
            "cosine": round(self.cosine, 4),
            "words": round(self.words, 4),
            "z": round(self.z, 2),
            "evidence": None if self.evidence is None else round(self.evidence, 4),
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class ScoreBreakdown:
    """Why a memory was recalled: each weighted term, which sum to `total`."""

    similarity: float
    lexical: float
    recency: float
    importance: float
    access: float
    temporal: float = 0.0
    relevance: Relevance | None = None  # the absolute test; not part of the total
    question: str | None = None
    """For a message that asks several things: the one question whose terms scored this memory
    highest (None: the message as a whole did). Not part of the total."""
    diversity: float = 0.0
    """At most 0: what the memory lost for repeating a result ranked above it (the same
    session, a near-identical vector; see `memory.recall.ranking.diversify`)."""
    attribute: float = 0.0
    """At least 0: the lift of a memory that sets the attribute the question asks for ("where
    do I live?" and "I moved to Munich"), placing it first (`memory.recall.attribute_match`)."""

    @property
    def total(self) -> float:
        """The final score: the sum of the weighted terms."""
        return (
            self.similarity
            + self.lexical
            + self.recency
            + self.importance
            + self.access
            + self.temporal
            + self.diversity
            + self.attribute
        )

    def as_dict(self) -> dict[str, float]:
        """The breakdown plus its total, for JSON and `--explain`."""
        return {
            "similarity": self.similarity,
            "lexical": self.lexical,
            "recency": self.recency,
            "importance": self.importance,
            "access": self.access,
            "temporal": self.temporal,
            "diversity": self.diversity,
            "attribute": self.attribute,
            "total": self.total,
        }


@dataclass(slots=True)
class ScoredMemory:
    """A recalled memory and the reason it ranked where it did."""

    record: MemoryRecord
    score: float
    breakdown: ScoreBreakdown
