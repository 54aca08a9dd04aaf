"""Deterministic clustering of episodic embeddings by cosine (numpy only).

Average-linkage agglomerative clustering: repeatedly merge the two clusters whose members are
most alike on average (mean pairwise cosine), until no pair reaches the threshold. Unlike a
single pass over the points it does not depend on their order, and unlike single linkage it
does not chain a theme into its neighbours. Ties go to the lowest index, so the result is a
pure function of the input. Cost: an n×n matrix (float64: 8 MB for 1,000 episodes) and
O(n²) per merge; only points that belong to a theme are ever merged, so a typical user's ~100
episodes take about a millisecond.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from memory.storage.calibration import CosineMap as CosineMap

Matrix = npt.NDArray[np.float32]


def cosines(points: Matrix, other: Matrix, to_reference: CosineMap | None = None) -> Matrix:
    """`points @ other` (unit rows), on the reference scale when a map is given."""
    raw: Matrix = (points @ other).astype(np.float32)
    return raw if to_reference is None else to_reference(raw)


def normalise_rows(vectors: Matrix) -> Matrix:
    """Unit-length rows (zero rows stay zero)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    out: Matrix = (vectors / np.maximum(norms, 1e-12)).astype(np.float32)
    return out


def _average_linkage(
    points: Matrix, threshold: float, to_reference: CosineMap | None = None
) -> list[list[int]]:
    """Merge the two clusters with the highest mean pairwise cosine while it is ≥ threshold."""
    n = len(points)
    # Summed cosines between clusters, each on the reference scale before it is averaged.
    sums = cosines(points, points.T, to_reference).astype(np.float64)
    np.fill_diagonal(sums, 0.0)
    sizes = np.ones(n)
    links = sums.copy()  # mean cosine between clusters; -inf where no longer a pair
    np.fill_diagonal(links, -np.inf)
    members = [[i] for i in range(n)]
    alive = np.ones(n, dtype=bool)
    while n > 1:
        a, b = divmod(int(np.argmax(links)), n)
        if links[a, b] < threshold:
            break
        a, b = min(a, b), max(a, b)
        sums[a, :] += sums[b, :]
        sums[:, a] += sums[:, b]
        sizes[a] += sizes[b]
        members[a] += members[b]
        members[b] = []
        alive[b] = False
        row = np.where(alive, sums[a, :] / (sizes[a] * sizes), -np.inf)
        links[a, :] = row
        links[:, a] = row
        links[b, :] = -np.inf
        links[:, b] = -np.inf
        links[a, a] = -np.inf  # a cluster is never its own pair
    return [sorted(m) for m in members if m]


def cluster(
    vectors: Matrix,
    *,
    threshold: float,
    min_size: int = 2,
    to_reference: CosineMap | None = None,
) -> list[list[int]]:
    """Groups of row indexes whose vectors share a theme, largest first.

    Groups smaller than `min_size` are left out. Ties in size keep the order of their first
    member, so the result is a pure function of the input.
    """
    if len(vectors) == 0:
        return []
    points = normalise_rows(np.asarray(vectors, dtype=np.float32))
    kept = [g for g in _average_linkage(points, threshold, to_reference) if len(g) >= min_size]
    kept.sort(key=lambda members: (-len(members), members[0]))
    return kept


def centroid(vectors: Matrix) -> npt.NDArray[np.float32]:
    """The unit-length mean direction of some vectors."""
    mean = normalise_rows(np.asarray(vectors, dtype=np.float32)).mean(axis=0)
    out: npt.NDArray[np.float32] = normalise_rows(mean[None, :])[0]
    return out


def cohesion(vectors: Matrix, to_reference: CosineMap | None = None) -> float:
    """Mean cosine of the vectors to their centroid: 1.0 for identical, ~0.3 for unrelated."""
    if len(vectors) == 0:
        return 0.0
    points = normalise_rows(np.asarray(vectors, dtype=np.float32))
    return float(np.mean(cosines(points, centroid(points), to_reference)))


def medoid(vectors: Matrix) -> int:
    """Index of the vector with the highest mean cosine to the others (the most typical one).

    Ties go to the later row: the caller orders oldest first, so the newest wording wins.
    """
    points = normalise_rows(np.asarray(vectors, dtype=np.float32))
    mean_sims = (points @ points.T).mean(axis=1)
    best = float(mean_sims.max())
    return int(np.flatnonzero(mean_sims >= best - 1e-6)[-1])
