"""A linear model over a user turn's words, fitted on the gate corpus, that may veto a keep.

The rules read a turn's form clause by clause; this reads its wording as a whole, the way a
question, a request or small talk is worded across many phrasings no rule lists. It can only
turn a kept turn into a dropped one, never store more, and it judges only turns as short as
the ones it was fitted on. `python -m bench.gate_word_model` fits it on the corpus's tune split
and chooses the veto bar there; the fit has no model or data from outside the project.
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from pathlib import Path

import numpy as np
import numpy.typing as npt

MODEL_PATH = Path(__file__).with_name("word_model.npz")
# Hashed feature space, several times the tune split's distinct words and word pairs (some
# still share a bucket); a vocabulary table would be larger to ship.
DIMENSIONS = 1 << 18
# Latin words and numbers, single CJK characters (Chinese has no spaces; character pairs
# below carry its words), and any other single character (punctuation, emoji). Linear: each
# alternative consumes at least one character and never backtracks.
_TOKEN = re.compile(r"[a-z0-9']+|[\u4e00-\u9fff]|[^\sa-z0-9\u4e00-\u9fff]")
# Token counts are bucketed by fours up to this many buckets: length says something about form.
_LENGTH_BUCKETS = 10

Weights = npt.NDArray[np.float64]


def _logistic(z: float) -> float:
    # Clamped: exp overflows beyond about 709, and past 60 the answer is 0 or 1 anyway.
    return 1.0 / (1.0 + math.exp(-max(min(z, 60.0), -60.0)))


def features(text: str, max_chars: int) -> list[int]:
    """The hashed features of `text`'s first `max_chars` characters, each once, sorted."""
    tokens = _TOKEN.findall(text[:max_chars].lower())
    names = [f"u:{t}" for t in tokens]
    names += [f"b:{a}|{b}" for a, b in pairwise(tokens)]
    if tokens:
        names += [f"s:{tokens[0]}", f"e:{tokens[-1]}"]
    names.append(f"n:{min(len(tokens) // 4, _LENGTH_BUCKETS)}")
    return sorted({zlib.crc32(n.encode("utf-8")) % DIMENSIONS for n in names})


@dataclass(frozen=True)
class WordModel:
    """Logistic regression weights, the veto bar, and the longest turn it judges."""

    weights: Weights
    bias: float
    veto_below: float
    max_chars: int

    def keep_probability(self, text: str) -> float:
        """How likely the corpus's labels would keep a turn worded like `text`."""
        found = features(text, self.max_chars)
        return _logistic(float(self.weights[found].sum()) + self.bias)

    def judges(self, text: str) -> bool:
        """Whether `text` is as long as the turns it was fitted on (and not empty)."""
        return 0 < len(text.strip()) <= self.max_chars

    def vetoes(self, text: str) -> bool:
        """True when `text` is within the fitted length and reads as nothing to keep."""
        return self.judges(text) and self.keep_probability(text.strip()) < self.veto_below

    def save(self, path: Path = MODEL_PATH) -> None:
        """Write the model (float32 weights, compressed) where `load_model` reads it."""
        np.savez_compressed(
            path,
            weights=self.weights.astype(np.float32),
            meta=np.array([self.bias, self.veto_below, float(self.max_chars)]),
        )


def fit_weights(
    texts: Sequence[str],
    keep: Sequence[bool],
    *,
    max_chars: int,
    epochs: int = 8,
    rate: float = 0.2,
    l2: float = 1e-5,
    seed: int = 0,
) -> tuple[Weights, float]:
    """Stochastic gradient descent on the log loss; the same inputs give the same weights.

    Hand-written: the model is a sum over hashed features, and this loop is all a fit needs.
    """
    rows = [features(t, max_chars) for t in texts]
    labels = [1.0 if k else 0.0 for k in keep]
    weights: Weights = np.zeros(DIMENSIONS, dtype=np.float64)
    bias = 0.0
    order = np.random.default_rng(seed)
    for _ in range(epochs):
        for j in order.permutation(len(rows)):
            found = rows[j]
            gradient = _logistic(float(weights[found].sum()) + bias) - labels[j]
            weights[found] -= rate * (gradient + l2 * weights[found])
            bias -= rate * gradient
    return weights, bias


@cache
def load_model(path: Path = MODEL_PATH) -> WordModel | None:
    """The shipped model, or None where it is missing (the rules then decide alone)."""
    if not path.exists():
        return None
    with np.load(path) as data:
        weights = data["weights"].astype(np.float64)
        bias, veto_below, max_chars = (float(v) for v in data["meta"])
    if weights.shape != (DIMENSIONS,):
        raise ValueError(f"{path}: expected {DIMENSIONS} weights, found {weights.shape}")
    return WordModel(weights, bias, veto_below, int(max_chars))
