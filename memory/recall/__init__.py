"""Recall: the per-user index, BM25 + dense + temporal signals, and the explainable ranking.

A `Recaller` (one per store, `recaller_for`) serves ranked recall from its `RecallCache`.

Names are imported on first use, so importing the package stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
    "LatencyObserver": "recaller",
    "Recaller": "recaller",
    "recaller_for": "recaller",
    "TurnRecall": "recaller",
    "Recalled": "recaller",
    "RecallCache": "cache",
    "ScopeEntry": "cache",
    "RankingWeights": "ranking",
    "IndexedMemory": "retrieval",
    "UserIndex": "retrieval",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)


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
