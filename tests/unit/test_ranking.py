from __future__ import annotations

from dataclasses import FrozenInstanceError, replace

import numpy as np
import pytest

from memory.recall.ranking import RankingWeights, access_boost, normalise, recency
from memory.recall.retrieval import UserIndex, copy_key
from memory.types import MemoryKind
from tests.unit._index_helpers import NOW, filler, memory, unit

W = RankingWeights()


def _order(index: UserIndex, query: str, weights: RankingWeights = W, k: int = 5) -> list[str]:
    return [mid for mid, _ in index.search(query, unit(0), k=k, now=NOW, weights=weights)]


def test_recency_orders_otherwise_equal_memories() -> None:
    index = UserIndex()
    index.upsert([memory("a-old", "team offsite plan", days_ago=60),
                  memory("b-new", "team offsite plan", days_ago=1)])  # fmt: skip
    assert _order(index, "offsite plan") == ["b-new", "a-old"]
    # Without the recency term the tie falls back to id order: recency is what flipped it.
    assert _order(index, "offsite plan", replace(W, beta=0.0)) == ["a-old", "b-new"]


def test_importance_orders_otherwise_equal_memories() -> None:
    index = UserIndex()
    index.upsert([memory("a-low", "deploy checklist", importance=0.1),
                  memory("b-high", "deploy checklist", importance=0.9)])  # fmt: skip
    assert _order(index, "deploy checklist") == ["b-high", "a-low"]
    assert _order(index, "deploy checklist", replace(W, gamma=0.0)) == ["a-low", "b-high"]


def test_access_boost_orders_ties_and_is_capped() -> None:
    index = UserIndex()
    index.upsert([memory("a-cold", "vpn settings", access_count=0),
                  memory("b-hot", "vpn settings", access_count=50)])  # fmt: skip
    assert _order(index, "vpn settings") == ["b-hot", "a-cold"]
    boosts = access_boost(np.array([0, 1, 10, 10_000], dtype=np.float32), W)
    assert boosts[0] == 0.0 and boosts[1] < boosts[2]
    assert boosts.max() == pytest.approx(W.access_cap)


def test_half_life_is_per_kind() -> None:
    index = UserIndex()
    index.upsert([memory("a-episode", "prefers window seats", days_ago=120),
                  memory("b-pref", "prefers window seats", days_ago=120,
                         kind=MemoryKind.PREFERENCE)])  # fmt: skip
    hits = dict(index.search("window seats", unit(0), k=2, now=NOW, weights=W))
    assert hits["b-pref"].recency > 4 * hits["a-episode"].recency
    assert recency(np.array([30 * 86_400.0], dtype=np.float32),
                   np.array([30.0], dtype=np.float32))[0] == pytest.approx(0.5)  # fmt: skip


def test_breakdown_terms_sum_exactly_to_the_score_and_results_are_sorted() -> None:
    index = UserIndex()
    items = [*filler(40), memory("hit", "met Anna in Lisbon last week", days_ago=3,
                                 speaker="Anna", group="s1", access_count=3)]  # fmt: skip
    index.upsert(items)
    texts = {item.id: item.text for item in items}
    hits = index.search("When did I meet Anna last week?", unit(0), k=10, now=NOW, weights=W)
    # Distinct results are sorted by total; copies of a text already returned come after them.
    keys = [copy_key(texts[mid]) for mid, _ in hits]
    distinct = [i for i, key in enumerate(keys) if key not in keys[:i]]
    assert distinct == list(range(len(distinct)))
    totals = [hits[i][1].total for i in distinct]
    assert totals == sorted(totals, reverse=True)
    copies = [b.total for _, b in hits[len(distinct) :]]
    assert copies == sorted(copies, reverse=True)
    for _, b in hits:
        parts = [b.similarity, b.lexical, b.recency, b.importance, b.access, b.temporal]
        parts.append(b.diversity)
        assert b.total == sum(parts)  # exact, not approximate
        assert b.as_dict()["total"] == b.total
    best = hits[0][1]
    assert hits[0][0] == "hit" and best.lexical > 0 and best.temporal > 0 and best.access > 0


def test_normalise_floors_the_spread() -> None:
    values = np.array([0.30, 0.32], dtype=np.float32)
    assert normalise(values, floor=0.1).max() == pytest.approx(0.2)  # not stretched to 1
    assert normalise(np.array([1.0, 3.0], dtype=np.float32), floor=0.1).tolist() == [0.0, 1.0]


def test_weights_are_frozen_and_events_fade_fastest() -> None:
    with pytest.raises(FrozenInstanceError):
        W.alpha = 2.0  # type: ignore[misc]
    assert W.half_life(MemoryKind.EPISODIC) < W.half_life(MemoryKind.SEMANTIC)
