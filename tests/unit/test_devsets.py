"""The development sets are rebuilt deterministically and every gold id names a turn."""

from __future__ import annotations

import json

import pytest

from bench.devsets.build import (
    _FILLER_POOL,
    _LONG_SETS,
    HERE,
    LONG_DIR,
    PAIRED_DIR,
    SETS,
    built_sets,
    long_history,
    paired,
    sample,
)


@pytest.mark.parametrize("name", sorted(SETS))
def test_the_committed_set_is_what_the_builder_writes(name: str) -> None:
    built = [sample(c, _FILLER_POOL.get(name)) for c in SETS[name]]
    assert built == [sample(c, _FILLER_POOL.get(name)) for c in SETS[name]]  # deterministic
    committed = json.loads((HERE / f"{name}.json").read_text(encoding="utf-8"))
    assert committed == json.loads(json.dumps(built, ensure_ascii=False))


@pytest.mark.parametrize("name", sorted(SETS))
def test_every_question_has_gold_turns_by_the_user(name: str) -> None:
    for conv in (sample(c, _FILLER_POOL.get(name)) for c in SETS[name]):
        turns = {
            t["dia_id"]: t
            for key, value in conv["conversation"].items()
            if key.startswith("session_") and isinstance(value, list)
            for t in value
        }
        assert conv["qa"]
        for qa in conv["qa"]:
            assert qa["evidence"], qa
            for dia in qa["evidence"]:
                assert dia in turns, (conv["sample_id"], dia)


def _texts(conv: dict[str, object]) -> dict[str, str]:
    body = conv["conversation"]
    assert isinstance(body, dict)
    return {t["dia_id"]: t["text"] for k, v in body.items()
            if k.startswith("session_") and isinstance(v, list) for t in v}  # fmt: skip


def test_the_long_history_check_is_every_english_set_as_one_user() -> None:
    built = built_sets()
    (long,) = json.loads((LONG_DIR / "long.json").read_text(encoding="utf-8"))
    assert long == json.loads(json.dumps(long_history(built), ensure_ascii=False))
    merged = _texts(long)
    convs = [c for name in _LONG_SETS for c in built[name]]
    assert len(merged) == sum(len(_texts(c)) for c in convs)
    questions = iter(long["qa"])
    for conv in convs:  # every evidence id still names the turn it named in its own set
        own = _texts(conv)
        for q in conv["qa"]:
            moved = next(questions)
            assert moved["question"] == q["question"]
            assert [own[e] for e in q["evidence"]] == [merged[e] for e in moved["evidence"]]
    assert next(questions, None) is None


def test_the_paired_questions_join_two_questions_and_their_evidence() -> None:
    built = built_sets()
    long = long_history(built)
    committed = json.loads((PAIRED_DIR / "paired.json").read_text(encoding="utf-8"))
    assert committed == json.loads(json.dumps(paired(long, built), ensure_ascii=False))
    sources = [long, *(c for name in ("zh", "hops_zh") for c in built[name])]
    asked = 0
    for conv, source in zip(committed, sources, strict=True):
        assert conv["conversation"] == source["conversation"]
        questions = {q["question"].rstrip("?？").lower(): q["evidence"] for q in source["qa"]}
        turns = _texts(conv)
        for qa in conv["qa"]:
            asked += 1
            assert all(e in turns for e in qa["evidence"])
            # Two of the source's questions, each named in the text, their evidence joined.
            text = qa["question"].lower()
            pairs = [
                (a, b)
                for a in questions
                for b in questions
                if a != b and text.startswith(a) and b in text[len(a) :]
                and questions[a] + questions[b] == qa["evidence"]
            ]  # fmt: skip
            assert pairs, qa["question"]
    assert asked >= 80
