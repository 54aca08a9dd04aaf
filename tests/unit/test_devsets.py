"""The development sets are rebuilt deterministically and every gold id names a turn."""

from __future__ import annotations

import json

import pytest

from bench.devsets.build import _FILLER_POOL, HERE, SETS, sample


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
