"""Consolidation's policy, its decision record and the per-user working set of a run.

Every threshold has a production default and a reason; a deployment tunes them in one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from memory.recall.ranking import default_half_lives
from memory.types import MemoryKind, MemoryRecord, Scope

if TYPE_CHECKING:  # types only: the store imports nothing of consolidation
    from langchain_core.language_models import BaseChatModel

    from memory.storage.store import MemoryStore

STEPS = ("expire", "decay_cleanup", "cluster", "distil", "merge_duplicates", "resolve_conflicts")


def _half_lives() -> Mapping[MemoryKind, float]:
    # The same half-lives recall ranks with, so "relevance" means one thing across the system.
    return default_half_lives()


@dataclass(frozen=True, slots=True)
class ConsolidationPolicy:
    """Thresholds of the consolidation job."""

    decay_threshold: float = 0.2
    """Relevance = decay·0.6 + importance·0.3 + access·0.1 below this is removed.
    With importance 0.5 an unused episode goes after ~3.6 half-lives (107 days); importance
    ≥ 0.67 alone keeps a memory."""
    half_life_days: Mapping[MemoryKind, float] = field(default_factory=_half_lives)
    cluster_threshold: float = 0.6
    """Mean pairwise cosine at which two groups of episodes are one theme. MiniLM puts
    paraphrases of one preference at 0.6-0.9, "prefer TypeScript" vs "prefer JavaScript" for
    code examples at 0.47-0.73 (mean 0.58), and unrelated statements below 0.3."""
    min_support: int = 3
    """Episodes a theme needs before it may become long-term memory."""
    min_days: int = 2
    """Distinct days those episodes must span, counted as 24-hour windows (`distinct_days`):
    one conversation repeating itself is not a stable preference, even across midnight."""
    min_evidence: float = 0.5
    """support(n)·agreement a theme needs (n=3 with agreement 0.8 just passes)."""
    min_agreeing_share: float = 0.75
    """Share of a theme's episodes that must agree: same polarity ("use X" vs "don't use X")
    and no contradiction of the theme's most typical statement ("tea" vs "coffee")."""
    reinforce_threshold: float = 0.85
    """Cosine at which a distilled theme is the same as an existing long-term memory, which is
    then reinforced instead of duplicated."""
    merge_threshold: float = 0.92
    """Long-term memories at least this similar are merged. Set high so that only
    near-restatements merge (paraphrases of one preference score 0.6-0.9 under MiniLM, see
    `cluster_threshold`); the rest is left to conflict resolution."""
    conflict_min_similarity: float = 0.5
    """Long-term memories this similar are checked against each other by the conflict policy."""
    conflict_candidates: int = 5
    purge_after_days: float = 30.0
    """Expired rows are kept (out of recall and out of Chroma) this long, so a run can be rolled
    back; after that they are deleted for good, with their version history."""
    max_cluster_items: int = 1000
    """Newest episodes clustered per user per run (an n×n similarity matrix: 8 MB at 1,000)."""
    decisions_kept: int = 1000
    """Decisions stored with each user's run record (all are in the audit log)."""


@dataclass(frozen=True, slots=True)
class Decision:
    """One thing a run did (or, in a dry run, would do), and why."""

    step: str
    action: str
    memory_id: str
    reason: str
    related: tuple[str, ...] = ()
    detail: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """JSON form for the run record, the graph output and the CLI."""
        return {
            "step": self.step,
            "action": self.action,
            "memory_id": self.memory_id,
            "reason": self.reason,
            "related": list(self.related),
            "detail": dict(self.detail),
        }


@dataclass(slots=True)
class UserRun:
    """One user's part of a run: the active memories it plans on, and what it changed.

    The working set is kept current as steps apply changes (or, in a dry run, pretend to), so
    each step plans on the state the previous steps left.
    """

    run_id: str
    scope: Scope
    now: datetime
    dry_run: bool
    records: dict[str, MemoryRecord] = field(default_factory=dict)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    clusters: list[list[str]] = field(default_factory=list)
    touched: set[str] = field(default_factory=set)
    counts: dict[str, int] = field(default_factory=dict)
    decisions: list[Decision] = field(default_factory=list)
    # Chroma changes queued by the steps, flushed when the user's run closes (`index`).
    index_gone: set[str] = field(default_factory=set)
    index_put: dict[str, MemoryRecord] = field(default_factory=dict)
    index_created: set[str] = field(default_factory=set)

    def count(self, key: str, n: int = 1) -> None:
        """Add to a per-step counter."""
        self.counts[key] = self.counts.get(key, 0) + n

    def active(self, *, episodic: bool | None = None) -> list[MemoryRecord]:
        """Active memories in a stable order (oldest first, then id), optionally by layer."""
        rows = [
            r
            for r in self.records.values()
            if episodic is None or (r.kind is MemoryKind.EPISODIC) == episodic
        ]
        rows.sort(key=lambda r: (r.occurred_at, r.id))
        return rows


@dataclass(frozen=True, slots=True)
class StepContext:
    """What every step needs besides the user's run: the store, the policy, an optional model."""

    store: MemoryStore
    policy: ConsolidationPolicy = field(default_factory=ConsolidationPolicy)
    model: BaseChatModel | None = None
