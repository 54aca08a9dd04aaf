"""The diversity step of recall ranking: one session or one near-copy does not fill the top k."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from memory.recall.ranking import RankingWeights, Redundancy, diversify
from memory.recall.retrieval import UserIndex
from tests.unit._index_helpers import NOW, filler, memory, unit


def _redundancy(
    vectors: np.ndarray, groups: list[int], weight: float = 0.5, vector: float = 0.5
) -> Redundancy:
    return Redundancy(
        vectors.astype(np.float32), np.array(groups, dtype=np.int32), weight, 0.5, vector
    )


def test_a_second_session_rises_above_a_neighbouring_turn() -> None:
    vectors = np.stack([unit(1), unit(2), unit(3), unit(4)])
    total = np.array([1.0, 0.95, 0.8, 0.1])
    # Positions 0 and 1 are turns of one session; 2 is another session, a little lower.
    picked, losses = diversify([0, 1, 2, 3], total, _redundancy(vectors, [7, 7, 8, 9]), k=3)
    assert picked == [0, 2, 1]
    assert losses[0] == 0.0 and losses[1] < 2 * losses[2] <= 0.0
    # A candidate loses at most `weight` of its total, so a far better one still comes second.
    picked, _ = diversify([0, 1, 2], np.array([1.0, 0.95, 0.3]),
                          _redundancy(vectors[:3], [7, 7, 8]), k=3)  # fmt: skip
    assert picked == [0, 1, 2]


def test_near_copies_from_other_sessions_are_spread_out() -> None:
    base = unit(5)
    twin = base + 0.01 * unit(6)
    vectors = np.stack([base, twin / np.linalg.norm(twin), unit(7), unit(8), unit(9)])
    total = np.array([1.0, 0.99, 0.7, 0.2, 0.1])
    picked, _ = diversify(range(5), total, _redundancy(vectors, [-1] * 5, vector=1.0), k=3)  # type: ignore[arg-type]
    assert picked == [0, 2, 1]
    # Off (weight 0), the order is the totals'.
    picked, losses = diversify(range(5), total, _redundancy(vectors, [-1] * 5, weight=0.0), k=3)  # type: ignore[arg-type]
    assert picked == [0, 1, 2] and not losses.any()


def test_search_results_stay_sorted_by_total_with_their_losses() -> None:
    index = UserIndex()
    shared = unit(11)
    items = [*filler(30)]
    items += [memory(f"s1-{i}", f"the boiler in the flat broke, turn {i}", vector=shared,
                     group="s1") for i in range(4)]  # fmt: skip
    near = shared + 0.3 * unit(12)
    items.append(memory("s2", "the boiler was repaired by the plumber",
                        vector=near / np.linalg.norm(near), group="s2"))  # fmt: skip
    index.upsert(items)
    weights = RankingWeights(diversity=0.5, diversity_session=0.5, fallback=0.0)
    hits = index.search("boiler broke", shared, k=5, now=NOW, weights=weights)
    totals = [b.total for _, b in hits]
    assert totals == sorted(totals, reverse=True)
    assert [mid for mid, _ in hits[:2]] == ["s1-0", "s2"]
    plain = index.search("boiler broke", shared, k=5, now=NOW,
                         weights=replace(weights, diversity=0.0))  # fmt: skip
    assert all(b.diversity == 0.0 for _, b in plain)
    assert [mid for mid, _ in plain[:4]] == ["s1-0", "s1-1", "s1-2", "s1-3"]
