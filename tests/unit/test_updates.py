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


P, F, D, C = Category.PREFERENCE, Category.FACT, Category.DECISION, Category.CONSTRAINT


@pytest.mark.parametrize(
    ("old", "new", "category"),
    [
        # A change word negated or put off keeps the value ("不会换", "懒得取消", "接着用").
        ("看NBA我支持勇士。", "勇士又输了，但我不会换的，库里在一天我就支持一天。", P),
        ("我开的是腾讯视频会员。", "腾讯视频又自动续费了，懒得取消，接着看吧。", F),
        ("家里冰箱是海尔的对开门。", "海尔冰箱不制冷了，师傅来换了个零件修好了，接着用。", F),
        ("我用招行的信用卡。", "招行信用卡年费涨了，但我不打算换，积分还挺好用。", F),
        # The old statement's own change said again.
        ("决定把次卧改成书房。", "书架到货了，次卧改书房总算开始动工。", D),
        ("我们决定把周会改到周四。", "周会改到周四以后大家都说好多了。", D),
        ("I sing alto in the community choir.",
         "Our director tried me on tenor for one piece last week, but I'm an alto and that's "
         "where I'm staying.", F),
        ("I bank with Monzo.", "Monzo put their fees up but I'm not going to switch.", F),
        # A repair keeps the thing.
        ("家里门锁是指纹锁。", "门锁没电了进不去门，换了电池又好了。", F),
        ("My car is a 2015 Golf.", "The Golf's gearbox went, got it fixed and it's working again.",
         F),
        # "after eight" and "switched off" say no change.
        ("工作日中午我不能离开工位太久。", "工作日晚上八点以后我不回工作消息。", C),
        ("I can't travel on the 12th, I've got jury service.",
         "Jury service means my phone has to be switched off in court all day.", C),
    ],
)  # fmt: skip
def test_a_value_said_to_stay_or_another_slot_is_no_update(
    embedder: Embedder, old: str, new: str, category: Category
) -> None:
    assert _resolve(embedder, old, new, category) != "supersede"


@pytest.mark.parametrize(
    ("old", "new", "category"),
    [
        ("我是初级测试工程师。", "年初升了测试主管，开始带三个人。", F),
        ("我在单位合唱团唱女高音。", "合唱团老师让我改唱女中音，说我低音更稳。", F),
        ("我们组开会用飞书。", "飞书续费太贵，行政说换成钉钉了。", F),
        ("我家洗碗机是美的的。", "洗碗机坏了修不好，换了台西门子。", F),
        ("代码合并前需要一个人review。", "出了那次事故以后，领导要求至少两个人批准才能合。",
         C),
    ],
)  # fmt: skip
def test_a_change_near_those_words_still_updates(
    embedder: Embedder, old: str, new: str, category: Category
) -> None:
    assert _resolve(embedder, old, new, category) == "supersede"
