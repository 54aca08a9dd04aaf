"""Fit the gate's word model on the corpus's tune split, choose its veto bar, and save it.

    python -m bench.gate_word_model [--corpus tests/data/gate_meaning] [--check]

The weights are fitted on every tune item. The veto bar is chosen by cross-validation on tune
alone: the tune batches are split into folds, a model fitted without a fold vetoes the rules'
keeps on it, and the bar with the best accuracy (mean of English and Chinese; among bars less
than one turn apart, the lowest) wins. The holdout, reading and blind splits are never read
here. The longest tune turn sets how long a turn the model judges. It prints the chosen bar
and, for each split and language, the accuracy of the rules alone and with the veto. `--check`
fits and compares with the shipped model instead of writing it (`tests/unit/test_word_model.py`
checks the weights the same way).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from bench.gate_meaning import CORPUS, load
from memory.gating.gate import GatePolicy, gate
from memory.gating.rules.decide import VETOED
from memory.gating.word_model import MODEL_PATH, WordModel, fit_weights, load_model

FOLDS = 8
BARS = (0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3)
_RULES_ONLY = GatePolicy(word_model_veto=False)


def tune_items(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The items the model may be fitted and chosen on."""
    return [i for i in items if i["split"] == "tune"]


def fit(items: Sequence[dict[str, Any]], max_chars: int, veto_below: float) -> WordModel:
    """A model fitted on `items` with the given bar."""
    weights, bias = fit_weights(
        [i["text"] for i in items], [bool(i["keep"]) for i in items], max_chars=max_chars
    )
    return WordModel(weights, bias, veto_below, max_chars)


def rules_keep(item: dict[str, Any]) -> bool:
    """The rule gate's decision alone."""
    context = item.get("context")
    return gate(item["text"], role=item["role"], context=context, policy=_RULES_ONLY).keep


def vetoable(item: dict[str, Any], model: WordModel) -> bool:
    """Whether the gate lets a model veto this turn: one whose bar vetoes everything tells."""
    always = replace(model, veto_below=2.0)
    decision = gate(item["text"], role=item["role"], context=item.get("context"), word_model=always)
    return decision.reason == VETOED


def choose_bar(tune: list[dict[str, Any]], max_chars: int) -> dict[float, float]:
    """Cross-validated accuracy of the rules with the veto, per bar (mean of the languages)."""
    right = {bar: {"en": 0, "zh": 0} for bar in BARS}
    count = {"en": 0, "zh": 0}
    for fold in range(FOLDS):
        held = [i for i in tune if i.get("batch", 0) % FOLDS == fold]
        model = fit([i for i in tune if i.get("batch", 0) % FOLDS != fold], max_chars, 0.0)
        for item in held:
            count[item["lang"]] += 1
            keep = rules_keep(item)
            open_to_veto = keep and vetoable(item, model)
            p = model.keep_probability(item["text"])
            for bar in BARS:
                kept = keep and not (open_to_veto and p < bar)
                right[bar][item["lang"]] += kept == item["keep"]
    return {bar: (r["en"] / count["en"] + r["zh"] / count["zh"]) / 2 for bar, r in right.items()}


def report(items: list[dict[str, Any]], model: WordModel) -> None:
    """Rules alone and with the veto, per split and language."""
    for split in ("tune", "holdout", "reading", "blind"):
        for lang in ("en", "zh"):
            part = [i for i in items if i["split"] == split and i["lang"] == lang]
            if not part:
                continue
            alone = with_veto = 0
            for item in part:
                alone += rules_keep(item) == item["keep"]
                decision = gate(item["text"], role=item["role"], context=item.get("context"),
                                word_model=model)  # fmt: skip
                with_veto += decision.keep == item["keep"]
            print(f"{split} {lang}: rules {alone / len(part):.3f}, "
                  f"with the veto {with_veto / len(part):.3f} ({len(part)} turns)")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m bench.gate_word_model")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--check", action="store_true", help="compare with the shipped model")
    args = parser.parse_args(argv)
    items = load(args.corpus)
    tune = tune_items(items)
    max_chars = max(len(i["text"].strip()) for i in tune)
    scores = choose_bar(tune, max_chars)
    for bar, score in scores.items():
        print(f"bar {bar}: cross-validated accuracy {score:.5f}")
    # Bars less than one turn apart tie; the lowest overrules the rules least.
    tie = 0.5 / max(sum(i["lang"] == lang for i in tune) for lang in ("en", "zh"))
    best = max(scores.values())
    veto_below = min(bar for bar, score in scores.items() if score > best - tie)
    model = fit(tune, max_chars, veto_below)
    print(f"chosen bar {veto_below}; judges turns up to {max_chars} characters")
    if args.check:
        shipped = load_model()
        same = (
            shipped is not None
            and shipped.veto_below == veto_below
            and shipped.max_chars == max_chars
            and abs(shipped.bias - model.bias) < 1e-6
            and bool(np.allclose(shipped.weights, model.weights, atol=1e-5))
        )
        print("the shipped model matches" if same else "the shipped model is stale: refit it")
        return 0 if same else 1
    model.save(MODEL_PATH)
    load_model.cache_clear()
    report(items, model)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
