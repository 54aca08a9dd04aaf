"""The per-model cosine scale: monotone, identity for the reference model, clear on degenerate."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from memory.storage.calibration import (
    CosineScale,
    DegenerateEmbeddingError,
    identity_scale,
    language_of,
    measure,
    reference_set,
    scale_for,
)


class _Vectors:
    """An embedder from a function of the text (no model)."""

    def __init__(self, name: str, fn: object) -> None:
        self.name = name
        self._fn = fn

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.vstack([self._fn(t) for t in texts]).astype(np.float32)  # type: ignore[operator]


def _hashed(text: str) -> np.ndarray:
    rng = np.random.default_rng(abs(hash(text)) % 2**32)
    v = rng.normal(size=16)
    return v / np.linalg.norm(v)


def test_reference_set_is_bilingual_and_balanced() -> None:
    ref = reference_set()
    langs = {lang for *_, lang in ref.pairs}
    assert {"en", "zh"} <= langs
    assert len(ref.pairs) >= 200
    related = sum(r for _, _, r, _ in ref.pairs)
    assert 0.3 < related / len(ref.pairs) < 0.7
    assert list(ref.quantiles) == sorted(ref.quantiles)


def test_map_is_strictly_increasing_everywhere() -> None:
    ref = reference_set()
    shifted = tuple(0.7 + 0.3 * (q + 0.02) for q in ref.quantiles)  # a model bunched high
    scale = CosineScale("shifted", ref.version, shifted, ref.quantiles)
    xs = np.linspace(-1.0, 1.0, 2001, dtype=np.float32)
    ys = scale.to_reference(xs)
    assert np.all(np.diff(ys) > 0)
    assert scale.one(1.0) == pytest.approx(1.0, abs=1e-6)
    # Its quantiles land on the reference's.
    assert scale.to_reference(shifted) == pytest.approx(np.array(ref.quantiles), abs=1e-5)


def test_identity_scale_changes_nothing() -> None:
    scale = identity_scale("local:all-MiniLM-L6-v2")
    xs = np.linspace(-1.0, 1.0, 101, dtype=np.float32)
    assert scale.identity
    assert np.array_equal(scale.to_reference(xs), xs)


def test_a_background_reads_the_same_in_every_language() -> None:
    """`in_language` and `as_english` are inverses: one cosine, at the same quantile."""
    scale = identity_scale("local:all-MiniLM-L6-v2")
    english = (0.044, 0.076)
    there = scale.in_language(english, "zh")
    assert there[0] > 0.3  # all-MiniLM bunches Chinese texts high
    ref = reference_set()
    # The English mean sits at the same quantile of the Chinese background as of the English.
    share_en = np.mean(np.asarray(ref.background_quantiles["en"]) < english[0])
    share_zh = np.mean(np.asarray(ref.background_quantiles["zh"]) < there[0])
    assert share_zh == pytest.approx(share_en, abs=0.05)
    back = scale.as_english([there[0], there[0] + there[1]], "zh")
    assert back[0] == pytest.approx(english[0], abs=1e-5)
    assert back[1] - back[0] == pytest.approx(english[1], abs=1e-5)
    assert scale.in_language(english, "en") == pytest.approx(english)
    assert np.allclose(scale.as_english([0.3, 0.7], "en"), np.float32([0.3, 0.7]))


def test_another_models_background_is_read_as_the_references_english() -> None:
    """A model whose unrelated texts sit higher, or wider, is read back onto the reference's."""
    ref = reference_set()
    english = np.asarray(ref.background_quantiles["en"])
    shifted = CosineScale(
        "shifted", ref.version, ref.quantiles, ref.quantiles,
        background_quantiles={"en": tuple(english + 0.1), "zh": tuple(2 * english)},
    )  # fmt: skip
    # Inside the measured range and past it (a related pair's cosine is above the top level).
    assert shifted.as_english([0.1, 0.9], "en") == pytest.approx([0.0, 0.8], abs=1e-5)
    assert shifted.as_english([0.1, 0.9], "zh") == pytest.approx([0.05, 0.45], abs=1e-5)
    there = shifted.in_language((0.044, 0.076), "zh")
    back = shifted.as_english([there[0], there[0] + there[1]], "zh")
    assert back == pytest.approx([0.044, 0.12], abs=1e-5)
    # Never measured in a language: its cosines are read as they are.
    assert shifted.as_english([0.3], "fr") == pytest.approx([0.3])


def test_the_background_is_what_a_question_about_nothing_meets() -> None:
    """Measured on the set's background questions against its memories, per language."""
    ref = reference_set()
    for lang in ("en", "zh"):
        assert len(ref.background_queries[lang]) >= 30 and ref.memories(lang)
        assert not set(ref.background_queries[lang]) & set(ref.texts())
    minilm = identity_scale("local:all-MiniLM-L6-v2")
    assert minilm.background == ref.background
    assert minilm.background_quantiles == ref.background_quantiles
    for values in ref.background_quantiles.values():
        assert len(values) == len(ref.levels) and list(values) == sorted(values)


def test_a_language_is_read_poorly_only_where_the_model_barely_separates_it() -> None:
    minilm = identity_scale("local:all-MiniLM-L6-v2")
    assert minilm.reads_poorly("zh") and not minilm.reads_poorly("en")
    ref = reference_set()
    even = CosineScale(
        "even", ref.version, ref.quantiles, ref.quantiles,
        separation={"en": 0.6, "zh": 0.19}, background={"en": (0.13, 0.127), "zh": (0.62, 0.046)},
    )  # fmt: skip
    assert not even.reads_poorly("zh")  # 4.1 deviations in Chinese, 4.7 in English
    assert not CosineScale("unmeasured", ref.version, ref.quantiles, ref.quantiles).reads_poorly(
        "zh"
    )


@pytest.mark.parametrize(
    ("text", "lang"),
    [("Where do I work?", "en"), ("我在哪里上班", "zh"), ("Mein Hund heißt Bello", "en"),
     ("私の猫の名前は？", "zh"), ("내 고양이 이름", "zh"), ("my MacBook 坏了", "zh")],
)  # fmt: skip
def test_a_text_is_measured_as_the_language_of_its_script(text: str, lang: str) -> None:
    assert language_of(text) == lang


def test_constant_vectors_are_a_clear_error() -> None:
    constant = _Vectors("constant", lambda _t: np.ones(8) / np.sqrt(8))
    with pytest.raises(DegenerateEmbeddingError, match="constant"):
        measure(constant)


def test_a_measured_model_is_held_once() -> None:
    calls: list[int] = []

    def fn(text: str) -> np.ndarray:
        calls.append(1)
        return _hashed(text)

    model = _Vectors("hashed-test-model", fn)
    first = scale_for(model)
    count = len(calls)
    assert scale_for(model) is first
    assert len(calls) == count


@pytest.mark.skipif(
    not os.environ.get("MEMORY_EMBEDDING_MODEL_DIR"), reason="local MiniLM model not configured"
)
def test_local_minilm_reproduces_the_reference_quantiles() -> None:
    from memory.storage.embedding import get_embedder

    model_dir = Path(os.environ["MEMORY_EMBEDDING_MODEL_DIR"])
    embedder = get_embedder(f"local:{model_dir.name}", model_dir)
    scale = measure(embedder)
    assert np.allclose(scale.model_quantiles, reference_set().quantiles, atol=1e-3)
    assert scale.identity
    # The set's background and separation are this model's own, as measured.
    for lang, (mean, std) in reference_set().background.items():
        assert scale.background[lang] == pytest.approx((mean, std), abs=1e-3)
        assert scale.background_quantiles[lang] == pytest.approx(
            reference_set().background_quantiles[lang], abs=1e-3
        )
        assert scale.separation[lang] == pytest.approx(reference_set().separation[lang], abs=1e-3)
    xs = np.linspace(-1.0, 1.0, 101, dtype=np.float32)
    assert np.allclose(
        CosineScale(
            "m",
            scale.version,
            scale.model_quantiles,
            scale.reference_quantiles,
        ).to_reference(xs),
        xs,
        atol=1e-3,
    )
