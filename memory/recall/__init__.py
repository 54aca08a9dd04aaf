"""Recall: the per-user index, BM25 + dense + temporal signals, and the explainable ranking.

A `Recaller` (one per store, `recaller_for`) serves ranked recall from its `RecallCache`.

Names are imported on first use, so importing the package stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.exports import lazy_exports

if TYPE_CHECKING:
    from memory.recall.cache import (
        RecallCache,
        ScopeEntry,
    )
    from memory.recall.ranking import (
        RankingWeights,
    )
    from memory.recall.recaller import (
        LatencyObserver,
        Recaller,
        TurnRecall,
        recaller_for,
    )
    from memory.recall.retrieval import (
        IndexedMemory,
        UserIndex,
    )

_WHERE = {
    "LatencyObserver": ".recaller",
    "Recaller": ".recaller",
    "recaller_for": ".recaller",
    "TurnRecall": ".recaller",
    "Recalled": ".recaller",
    "RecallCache": ".cache",
    "ScopeEntry": ".cache",
    "RankingWeights": ".ranking",
    "IndexedMemory": ".retrieval",
    "UserIndex": ".retrieval",
}


__getattr__ = lazy_exports(__name__, _WHERE)


__all__ = [
    "IndexedMemory",
    "LatencyObserver",
    "RankingWeights",
    "RecallCache",
    "Recalled",
    "Recaller",
    "ScopeEntry",
    "TurnRecall",
    "UserIndex",
    "recaller_for",
]
