"""A per-embedding-model cosine scale: every cosine threshold holds for any model.

Every cut-off that reads a cosine (the relevance floor, near-duplicate detection, consolidation's
clusters) is written in the reference scale: the cosines all-MiniLM-L6-v2 gives, whose unrelated
pairs sit near 0.0-0.2 and paraphrases near 0.45-0.8. Another model spreads the same pairs
elsewhere (multilingual-e5-small puts unrelated pairs near 0.7-0.8), so its raw cosines are
mapped onto the reference scale before any comparison.

The map is measured, not configured: a built-in set of related and unrelated text pairs
(English and Chinese, `calibration_pairs.json`) is embedded with the model, the pooled pair
cosines' quantiles at fixed levels are matched to the reference model's quantiles on the same
pairs (stored with the set), and the map is piecewise linear through those points. The fit uses
the languages the reference model itself separates (`fit_languages`: English; all-MiniLM puts
any two Chinese texts near 0.6-0.7, a scale no threshold was written for); the other pairs
measure how well a model separates them once mapped (`separation`, shown by `stats`). Matching
quantiles keeps it strictly increasing, so the order of a query's cosines, and so what dense
similarity alone ranks first, is unchanged. It is measured once per model and set version and
cached (`memory.storage.calibrations` in Postgres, and in-process here).

The same measurement gives each language's **background**: the mean and standard deviation of
the cosines between the set's background questions (general knowledge and tasks: "Why is the
sky blue?", "给面包店起个名字") and its memories, on the reference scale, which is what a question
about nothing a user said meets. A model bunches the texts of a language it reads poorly
(all-MiniLM puts them near 0.49 in Chinese, 0.05 in English), and two models spread the same
unrelated texts differently even once mapped (the map matches the pooled pairs, not this
tail), so "how far a cosine stands out" is asked of the model's own background in the query's
language (`language_of`): a cosine at a quantile of it reads as the reference model's English
background cosine at that quantile (`as_english`).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
# Raw cosines (any shape) -> the same cosines on the reference scale: `CosineScale.to_reference`.
CosineMap = Callable[[npt.ArrayLike], F32]

# The smallest spread of quantiles a usable model shows between adjacent levels; below it the
# model gives (near) the same cosine to every pair and no map can be fitted.
_MIN_STEP = 1e-5


class DegenerateEmbeddingError(ValueError):
    """The model's cosines on the reference pairs cannot be mapped (e.g. constant vectors)."""


class _Embeds(Protocol):
    name: str

    def embed(self, texts: list[str]) -> Any:
        """Embed texts into L2-normalised rows."""
        ...


@dataclass(frozen=True)
class ReferenceSet:
    """The reference pairs, their version, and the reference model's quantiles on them."""

    version: str
    reference_model: str
    levels: tuple[float, ...]
    quantiles: tuple[float, ...]
    fit_languages: frozenset[str]
    pairs: tuple[tuple[str, str, bool, str], ...]
    # Per language: questions about nothing in the set's memories (the background's queries).
    background_queries: dict[str, tuple[str, ...]]
    # The reference model's per language: (mean, std) of background cosines, and median
    # related minus median unrelated pair cosine.
    background: dict[str, tuple[float, float]]
    separation: dict[str, float]
    # The reference model's background cosines per language at `levels` (`as_english`).
    background_quantiles: dict[str, tuple[float, ...]]

    def texts(self) -> list[str]:
        """Every distinct text of the pairs, in first-seen order."""
        return list(dict.fromkeys(t for a, b, _, _ in self.pairs for t in (a, b)))

    def embedded(self) -> list[str]:
        """Every distinct text `measure` embeds: the pairs' and the background questions."""
        queries = [
            q for lang in sorted(self.background_queries) for q in self.background_queries[lang]
        ]
        return list(dict.fromkeys([*self.texts(), *queries]))

    def memories(self, lang: str) -> list[str]:
        """The distinct memories (second texts) of `lang`'s pairs, in first-seen order."""
        return list(dict.fromkeys(b for _, b, _, pair_lang in self.pairs if pair_lang == lang))


@cache
def reference_set() -> ReferenceSet:
    """The built-in reference set (read once from the package)."""
    raw = json.loads(
        resources.files("memory.storage").joinpath("calibration_pairs.json").read_text("utf-8")
    )
    return ReferenceSet(
        version=str(raw["version"]),
        reference_model=str(raw["reference_model"]),
        levels=tuple(float(x) for x in raw["levels"]),
        quantiles=tuple(float(x) for x in raw["reference_quantiles"]),
        fit_languages=frozenset(str(x) for x in raw["fit_languages"]),
        pairs=tuple((str(a), str(b), bool(r), str(lang)) for a, b, r, lang in raw["pairs"]),
        background_queries={
            str(lang): tuple(str(q) for q in queries)
            for lang, queries in raw["background_queries"].items()
        },
        background={
            str(lang): (float(mean), float(std))
            for lang, (mean, std) in raw["reference_background"].items()
        },
        separation={str(k): float(v) for k, v in raw["reference_separation"].items()},
        background_quantiles={
            str(lang): tuple(float(x) for x in values)
            for lang, values in raw["reference_background_quantiles"].items()
        },
    )


# Scripts the reference set's "zh" pairs stand for: a model that reads one of them poorly
# (Han, kana, Hangul) bunches its texts as it bunches Chinese.
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def language_of(text: str) -> str:
    """The reference set's language a text is measured as: "zh" if it has CJK script, else "en"."""
    return "zh" if _CJK.search(text) else "en"


@dataclass(frozen=True)
class CosineScale:
    """A monotone piecewise-linear map from one model's cosines to the reference scale."""

    model: str
    version: str
    model_quantiles: tuple[float, ...]
    reference_quantiles: tuple[float, ...]
    measured_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    # Per language: median related minus median unrelated pair cosine, on the reference scale.
    separation: dict[str, float] = field(default_factory=dict, compare=False)
    # Per language: (mean, std) of background cosines (`measure`), on the reference scale.
    background: dict[str, tuple[float, float]] = field(default_factory=dict, compare=False)
    # Per language: the same cosines at the reference set's `levels`.
    background_quantiles: dict[str, tuple[float, ...]] = field(default_factory=dict, compare=False)
    _xs: F32 = field(init=False, repr=False, compare=False)
    _ys: F32 = field(init=False, repr=False, compare=False)
    # Per language: (this model's background quantiles, the reference's English ones).
    _knots: dict[str, tuple[F64, F64]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        xs = np.asarray(self.model_quantiles, dtype=np.float64)
        ys = np.asarray(self.reference_quantiles, dtype=np.float64)
        if xs.shape != ys.shape or xs.size < 2:
            raise DegenerateEmbeddingError(f"{self.model}: quantiles of unequal or short length")
        if np.any(np.diff(xs) < _MIN_STEP) or not np.all(np.isfinite(xs)):
            raise DegenerateEmbeddingError(
                f"embedding model {self.model!r} gives (nearly) the same cosine to related and"
                " unrelated reference pairs (quantiles"
                f" {xs.min():.4f}..{xs.max():.4f}); its cosines carry no usable similarity"
                " (constant or broken vectors?) and no calibration can be fitted"
            )
        # Outside the measured range: an identical text is cosine 1 under every model, and
        # below the lowest quantile the map continues at the ratio of the two ranges, so it
        # stays strictly increasing everywhere (np.interp alone would flatten both ends).
        slope = (ys[-1] - ys[0]) / (xs[-1] - xs[0])
        top_x, top_y = max(1.0, xs[-1] + _MIN_STEP), max(1.0, ys[-1] + _MIN_STEP)
        low_x = min(-1.0, xs[0] - _MIN_STEP)
        knots_x = np.concatenate([[low_x], xs, [top_x]])
        knots_y = np.concatenate([[ys[0] - slope * (xs[0] - low_x)], ys, [top_y]])
        object.__setattr__(self, "_xs", knots_x.astype(np.float32))
        object.__setattr__(self, "_ys", knots_y.astype(np.float32))
        object.__setattr__(self, "_knots", _language_knots(self.background_quantiles))

    @property
    def identity(self) -> bool:
        """Whether the map changes no cosine by more than 1e-3 (the reference model itself)."""
        diff = np.abs(np.subtract(self.model_quantiles, self.reference_quantiles))
        return bool(diff.max(initial=0.0) <= 1e-3)

    def to_reference(self, cosines: npt.ArrayLike) -> F32:
        """Raw cosines of this model, mapped onto the reference scale (vectorised)."""
        values = np.asarray(cosines, dtype=np.float32)
        if self.identity:
            return values
        return np.interp(values, self._xs, self._ys).astype(np.float32)

    def one(self, cosine: float) -> float:
        """One raw cosine on the reference scale."""
        return float(self.to_reference(np.float32(cosine)))

    def in_language(self, spread: tuple[float, float], lang: str) -> tuple[float, float]:
        """A (mean, std) of cosines the reference model gives English texts, as it reads here.

        `as_english`'s inverse, applied to the mean and to the mean plus one deviation: each
        sits at the same quantile of this model's background in `lang` as it sat of the
        reference model's in English. Unchanged for the reference model in English, or a
        language never measured.
        """
        knots = self._knots.get(lang)
        if knots is None:
            return spread
        ours, english = knots
        ends = np.asarray([spread[0], spread[0] + spread[1]], dtype=np.float64)
        low, high = _extended(ends, english, ours)
        return (float(low), float(high - low))

    def reads_poorly(self, lang: str) -> bool:
        """Whether the model sets `lang`'s related pairs under half as far out as English's.

        Measured in each language's background deviations: all-MiniLM sets related Chinese
        pairs 1.3 deviations above unrelated ones, English 7.9; multilingual-e5-small 2.3 and
        5.7. Where it reads a language poorly, a cosine says little and the query's words must
        carry the evidence.
        """

        def apart(name: str) -> float | None:
            gap, spread = self.separation.get(name), self.background.get(name)
            return None if gap is None or spread is None or spread[1] <= 0.0 else gap / spread[1]

        ours, english = apart(lang), apart("en")
        return ours is not None and english is not None and ours < 0.5 * english

    def as_english(self, cosines: npt.ArrayLike, lang: str) -> F32:
        """Reference-scale cosines of texts in `lang`, read as the reference model's English.

        A cosine at a quantile of this model's background in `lang` becomes the reference
        model's English background cosine at that quantile (piecewise linear through the
        measured levels, continued past them at the ratio of the two ranges). Every cut-off
        fitted on the reference model in English (the relevance floor) then holds in any
        language and for any model. Quantiles, not mean and deviation: what counts is the
        upper tail a user's best cosine is drawn from, and e5's Chinese background is skewed
        (a long lower tail), so its deviation overstated the tail by a tenth of a cosine.
        """
        values = np.asarray(cosines, dtype=np.float32)
        knots = self._knots.get(lang)
        if knots is None:
            return values
        ours, english = knots
        return _extended(values.astype(np.float64), ours, english).astype(np.float32)

    def anchors(self) -> dict[str, float]:
        """A few raw cosines of this model and where they sit: its quartiles of the pair set."""
        levels = reference_set().levels
        out: dict[str, float] = {}
        for wanted in (0.25, 0.5, 0.75):
            i = int(np.argmin([abs(x - wanted) for x in levels]))
            out[f"q{round(levels[i] * 100)}"] = round(self.model_quantiles[i], 4)
        return out


def _language_knots(
    quantiles: dict[str, tuple[float, ...]],
) -> dict[str, tuple[F64, F64]]:
    """Per language: a model's background quantiles and the reference model's in English.

    Languages whose quantiles are missing, of another length or not increasing are left out:
    their cosines are read as they are.
    """
    english = reference_set().background_quantiles.get("en")
    if not english:
        return {}
    ys = np.asarray(english, dtype=np.float64)
    out: dict[str, tuple[F64, F64]] = {}
    for lang, ours in quantiles.items():
        xs = np.asarray(ours, dtype=np.float64)
        if xs.shape == ys.shape and np.all(np.diff(xs) >= _MIN_STEP):
            out[lang] = (xs, ys)
    return out


def _extended(values: F64, xs: F64, ys: F64) -> F64:
    """`values` mapped through the knots (xs -> ys), continued linearly past both ends."""
    slope = (ys[-1] - ys[0]) / (xs[-1] - xs[0])
    out = np.interp(values, xs, ys)
    out = np.where(values > xs[-1], ys[-1] + (values - xs[-1]) * slope, out)
    return np.where(values < xs[0], ys[0] + (values - xs[0]) * slope, out)


def _vectors(model: _Embeds, ref: ReferenceSet) -> dict[str, F32]:
    """Every text of the set (pairs and background questions), embedded once, normalised."""
    texts = ref.embedded()
    vectors = np.asarray(model.embed(texts), dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != len(texts):
        raise DegenerateEmbeddingError(f"{model.name}: expected one vector per reference text")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = vectors / np.clip(norms, 1e-12, None)
    return dict(zip(texts, vectors, strict=True))


def _pair_cosines(vectors: dict[str, F32], ref: ReferenceSet) -> F32:
    """The cosine of every reference pair."""
    a = np.stack([vectors[p[0]] for p in ref.pairs])
    b = np.stack([vectors[p[1]] for p in ref.pairs])
    out: F32 = np.einsum("ij,ij->i", a, b).astype(np.float32)
    return out


def _background(vectors: dict[str, F32], ref: ReferenceSet, lang: str) -> F32:
    """Raw cosines of `lang`'s background questions with its memories (all pairs of them)."""
    queries = np.stack([vectors[q] for q in ref.background_queries[lang]])
    memories = np.stack([vectors[m] for m in ref.memories(lang)])
    out: F32 = (queries @ memories.T).reshape(-1).astype(np.float32)
    return out


def measure(model: _Embeds) -> CosineScale:
    """Embed the reference set with `model` and fit its scale (~360 texts, one batch call)."""
    ref = reference_set()
    vectors = _vectors(model, ref)
    cosines = _pair_cosines(vectors, ref)
    fit = np.array([lang in ref.fit_languages for *_, lang in ref.pairs])
    quantiles = np.quantile(cosines[fit].astype(np.float64), ref.levels)
    scale = CosineScale(
        model=model.name,
        version=ref.version,
        model_quantiles=tuple(round(float(q), 6) for q in quantiles),
        reference_quantiles=ref.quantiles,
    )
    mapped = scale.to_reference(cosines).astype(np.float64)
    related = np.array([r for _, _, r, _ in ref.pairs])
    langs = np.array([lang for *_, lang in ref.pairs])
    separation, background, quantiles = {}, {}, {}
    for lang in sorted(set(langs.tolist())):
        near, far = mapped[(langs == lang) & related], mapped[(langs == lang) & ~related]
        separation[str(lang)] = round(float(np.median(near)) - float(np.median(far)), 4)
        if lang in ref.background_queries:
            unrelated = scale.to_reference(_background(vectors, ref, lang)).astype(np.float64)
            background[str(lang)] = (
                round(float(unrelated.mean()), 4),
                round(float(unrelated.std()), 4),
            )
            quantiles[str(lang)] = tuple(
                round(float(q), 6) for q in np.quantile(unrelated, ref.levels)
            )
    return replace(
        scale, separation=separation, background=background, background_quantiles=quantiles
    )


def identity_scale(model: str) -> CosineScale:
    """The reference model's own scale: every cosine maps to itself."""
    ref = reference_set()
    return CosineScale(
        model,
        ref.version,
        ref.quantiles,
        ref.quantiles,
        separation=dict(ref.separation),
        background=dict(ref.background),
        background_quantiles=dict(ref.background_quantiles),
    )


_MEMO: dict[tuple[str, str], CosineScale] = {}
_MEMO_LOCK = threading.Lock()


def remember_scale(scale: CosineScale) -> None:
    """Hold a scale for this process (after loading it from Postgres or measuring it)."""
    with _MEMO_LOCK:
        _MEMO[(scale.model, scale.version)] = scale


def held_scale(model: str) -> CosineScale | None:
    """The scale this process holds for `model` at the current set version, if known."""
    ref = reference_set()
    if model == ref.reference_model:
        return identity_scale(model)
    with _MEMO_LOCK:
        return _MEMO.get((model, ref.version))


def scale_for(model: _Embeds) -> CosineScale:
    """The model's scale: the reference model's identity, held, or measured now (then held).

    The reference model needs no measuring: the set's quantiles are its own (a unit test holds
    the local model to them within 1e-3).
    """
    held = held_scale(model.name)
    if held is not None:
        return held
    scale = measure(model)
    remember_scale(scale)
    return scale
