"""Updates said without a correction marker, and agreeing statements, through the conflict policy.

The policy runs with the real all-MiniLM-L6-v2 embedder, as the write path calls it.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from bench.conflict_detection import detect
from bench.updates import PAIRS
from memory.attributes import compare, current_part, not_current, settings
from memory.gating.conflicts import Candidate, Existing, resolve
from memory.gating.gate import gate, split_candidates
from memory.storage.embedding import Embedder, get_embedder
from memory.types import Category, Origin
from tests.support.ports import REPO_ROOT

EARLIER = datetime(2025, 1, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def embedder(embedding_model_dir: Path) -> Embedder:
    return get_embedder("local:all-MiniLM-L6-v2", embedding_model_dir)


def _resolve(embedder: Embedder, old: str, new: str, category: Category = Category.FACT) -> str:
    vectors = embedder.embed([old, new])
    existing = Existing("old", old, float(np.dot(vectors[0], vectors[1])), Origin.EXPLICIT,
                        category, EARLIER)  # fmt: skip
    return resolve(Candidate(new, category), [existing], embed=embedder.embed).action


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I live in Berlin.", "I moved to Munich last month."),
        ("I use Vim for coding.", "I use VS Code for everything now."),
        ("I drink coffee every morning.", "These days I drink tea."),
        ("我住在北京。", "我上个月搬到深圳了。"),
        ("我在阿里巴巴工作。", "我跳槽到腾讯了。"),
    ],
)
def test_natural_update_supersedes(embedder: Embedder, old: str, new: str) -> None:
    assert _resolve(embedder, old, new) == "supersede"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Tea in the morning, not coffee.", "Tea in the morning, not coffee."),
        ("I drink tea in the morning.", "Tea in the morning, not coffee. I drink tea."),
        ("我喝茶。", "我早上喝茶，不喝咖啡。"),
    ],
)
def test_agreeing_statements_never_conflict(embedder: Embedder, old: str, new: str) -> None:
    assert _resolve(embedder, old, new, Category.PREFERENCE) in {"update_existing", "insert"}


def test_someone_elses_attribute_is_not_the_users() -> None:
    assert compare("我妈妈住在杭州。", "我住在上海。") is None
    assert settings("I moved to Munich last month.")[0].value == "munich"


def test_corpus_holdout_meets_the_bar(embedder: Embedder) -> None:
    lines = (REPO_ROOT / PAIRS).read_text(encoding="utf-8").splitlines()
    pairs = [json.loads(line) for line in lines if line.strip()]
    held = [p for p in pairs if p["split"] == "holdout"]
    assert {p["lang"] for p in held} == {"en", "zh"}
    found = detect(held, embedder.embed)
    for lang in ("en", "zh"):
        idx = [i for i, p in enumerate(held) if p["lang"] == lang]
        tp = sum(found[i] and held[i]["label"] == "update" for i in idx)
        flagged = sum(found[i] for i in idx)
        updates = sum(held[i]["label"] == "update" for i in idx)
        assert tp / max(flagged, 1) >= 0.9 and tp / updates >= 0.85, lang
        agree = [i for i in idx if held[i]["label"] == "agree"]
        assert sum(found[i] for i in agree) <= 0.05 * len(agree), lang


@pytest.mark.parametrize(
    "text", ["Tea is my morning drink; I don't like coffee.", "我早上喝茶；不喝咖啡。"]
)
def test_a_statement_is_never_cut_at_a_semicolon(text: str) -> None:
    assert split_candidates(text) == [text]
    assert gate(text).content == text


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I live in Berlin.", "I want to live in Munich someday."),
        ("I live in Berlin.", "I used to live in Munich."),
        ("I work at Siemens.", "I'm thinking of working at Google."),
        ("I live in Berlin.", "I got used to Munich before I moved back."),
        ("I live in Berlin.", "If the job works out, I'll move to Munich."),
        ("我住在北京。", "我以前住在上海。"),
        ("我住在北京。", "我打算搬到深圳。"),
    ],
)
def test_a_wish_a_plan_or_the_past_sets_no_current_value(old: str, new: str) -> None:
    assert compare(new, old) is None


@pytest.mark.parametrize(
    "text", ["I'm still getting used to Munich.", "Got used to the rain.", "I am used to it."]
)
def test_being_used_to_a_value_is_the_present(text: str) -> None:
    assert not not_current(text)
    assert not_current("I used to live in Munich.")


@pytest.mark.parametrize(
    ("text", "wish"),
    [
        ("要是公司能搬到地铁口就好了。", True),
        ("万一下雨就不去了。", True),
        ("假如我搬去成都，就买车。", True),
        ("降薪了，现在两万一。", False),  # a number, not "in case"
        ("换了华为，主要是信号好。", False),  # "mainly", not "if"
        ("只要是周末就行。", False),
    ],
)
def test_a_chinese_condition_is_no_current_value(text: str, wish: bool) -> None:
    assert not_current(text) is wish


def test_a_move_filed_as_a_decision_still_updates_the_fact(embedder: Embedder) -> None:
    # The gate files "I moved to Munich last month" as a decision; the attribute decides.
    vectors = embedder.embed(["I live in Berlin.", "I moved to Munich last month."])
    existing = Existing("old", "I live in Berlin.", float(np.dot(vectors[0], vectors[1])),
                        Origin.EXPLICIT, Category.FACT, EARLIER)  # fmt: skip
    verdict = resolve(
        Candidate("I moved to Munich last month.", Category.DECISION), [existing],
        embed=embedder.embed,
    )  # fmt: skip
    assert verdict.action == "supersede", verdict


@pytest.mark.parametrize(
    ("text", "part"),
    [
        ("预算加到二十万了，厨房想弄好一点。", "预算加到二十万了"),
        ("I moved to Leeds, before that York.", "I moved to Leeds"),
        ("If the job works out, I'll move to Munich.", ""),
        ("我打算搬到深圳。", ""),
        ("I live in D.C. now.", "I live in D.C. now."),
    ],
)
def test_the_current_part_of_a_statement_ends_at_its_first_wish_plan_or_past(
    text: str, part: str
) -> None:
    assert current_part(text) == part
