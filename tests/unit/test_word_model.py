"""The gate's word model: fitted on the corpus, it may only veto a keep, and only where allowed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from bench.gate_meaning import load
from bench.gate_word_model import fit, tune_items
from memory.gating.gate import GatePolicy, gate
from memory.gating.rules.decide import VETOED
from memory.gating.word_model import DIMENSIONS, WordModel, features, load_model

RULES_ONLY = GatePolicy(word_model_veto=False)
# Remarks on the moment that the rules keep as statements and the model reads as small talk.
REMARKS = [
    "The queue at the post office was out the door this morning",
    "今天的晚霞真的太好看了",
]


def _always() -> WordModel:
    """The shipped model with a bar that vetoes every turn it judges."""
    return replace(_shipped(), veto_below=2.0)


def _shipped() -> WordModel:
    model = load_model()
    assert model is not None, "word_model.npz is missing: run python -m bench.gate_word_model"
    return model


def test_the_shipped_model_is_the_one_the_tune_split_fits() -> None:
    # A corpus change without a refit would leave the shipped weights stale.
    shipped = _shipped()
    tune = tune_items(load())
    assert shipped.max_chars == max(len(i["text"].strip()) for i in tune)
    refit = fit(tune, shipped.max_chars, shipped.veto_below)
    assert refit.bias == pytest.approx(shipped.bias, abs=1e-6)
    assert np.allclose(refit.weights, shipped.weights, atol=1e-5)
    assert 0.0 < shipped.veto_below < 0.5


@pytest.mark.parametrize("text", REMARKS)
def test_a_remark_the_rules_keep_is_vetoed_with_its_reason(text: str) -> None:
    assert gate(text, policy=RULES_ONLY).keep
    decision = gate(text)
    assert not decision.keep
    assert decision.reason == VETOED


@pytest.mark.parametrize("text", REMARKS)
def test_an_explicit_request_to_remember_is_never_vetoed(text: str) -> None:
    assert gate(text, explicit=True).keep


def test_an_answer_to_the_agents_question_is_left_to_the_rules() -> None:
    text = REMARKS[0]
    asked = "How was your commute this week?"
    assert gate(text, context=asked).keep == gate(text, context=asked, policy=RULES_ONLY).keep


def test_a_turn_longer_than_the_fitted_ones_is_never_judged() -> None:
    always = _always()
    assert always.vetoes(REMARKS[0])
    assert not always.vetoes("x" * (always.max_chars + 1))
    assert not always.vetoes("   ")


@pytest.mark.parametrize(
    "text",
    [
        "Phew, finally passed my driving test today!",  # news told with relief
        "终于第一次自己换好了自行车胎，哈哈",  # a first
        "深色主题，谢谢",  # a thing named as wanted
        "组里的老张管数据库",  # a fact the rules' lexicon reads
        "I'm Bob.",  # who the user is
    ],
)
def test_the_rules_own_calls_are_never_overruled(text: str) -> None:
    assert gate(text, word_model=_always()).keep


def test_the_veto_only_ever_drops() -> None:
    always = _always()
    for item in load():
        if item["split"] != "holdout":
            continue
        if gate(item["text"], word_model=always).keep:
            assert gate(item["text"], policy=RULES_ONLY).keep, item["text"]


def test_features_are_bounded_by_the_characters_read() -> None:
    found = features("lol " * 100_000, 40)
    assert len(found) <= 3 + 4 and all(0 <= f < DIMENSIONS for f in found)


def test_a_missing_model_leaves_the_rules_alone(tmp_path: Path) -> None:
    assert load_model(tmp_path / "absent.npz") is None


def test_a_model_of_the_wrong_shape_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.npz"
    WordModel(np.zeros(7), 0.0, 0.05, 10).save(path)
    with pytest.raises(ValueError, match="expected"):
        load_model(path)
