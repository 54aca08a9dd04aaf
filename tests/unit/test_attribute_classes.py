"""Classes of phrasing `memory.attributes` reads, each with sentences of its own (English and
Chinese): an update found by its class, an agreement or someone else's attribute never is."""

from __future__ import annotations

import pytest

from memory.attributes import asked_attributes, compare, same_attribute
from memory.gating.gate import gate


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # The possessive copula both ways, and "has become".
        ("My dentist is Dr. Weber.", "Dr. Okoye has become my dentist."),
        ("My favourite author is Le Guin.", "Borges is my favourite author now."),
        ("我的导师是张教授。", "李教授成了我的导师。"),
        ("我的教练是老周。", "现在我的教练换成了小林。"),
        # Where the user is based, what is home.
        ("I'm based in Porto.", "Home is Braga these days."),
        ("I live in Ghent.", "Antwerp is home now."),
        # First day at a new employer; a role at a company.
        ("I'm a data analyst at Monzo.", "Today was my first day at Revolut."),
        ("我在字节做产品。", "我上个月去了快手，还是做产品。"),
        # A product's class names the attribute whatever verb carries it.
        ("I do all my Python in PyCharm.", "Zed is my IDE these days."),
        ("I read on a Kobo.", "My e-reader is a Kindle Oasis now."),
        ("我用的是小米手机。", "我现在拿的是一部 iPhone 15。"),
        # Decisions whose thing is named a little differently.
        ("Our mobile app is React Native.", "We decided to build the mobile app in Flutter."),
        ("The team picked Celery for background jobs.", "We're going with RQ for jobs."),
        ("We test with Jest.", "The team moved our tests to Vitest."),
        ("我们用 Jira 管理缺陷。", "团队决定把缺陷管理迁到 Linear。"),
        ("接口文档定为 Swagger。", "评审后我们改用 Apifox 来写接口文档。"),
        # Schedules: a day or a time is the value.
        ("Our design review is Tuesday at 11am.", "Design review happens Thursdays now."),
        ("日报每天六点前交。", "从下周起日报改成每天中午交。"),
        # Move and switch verbs with an object slot.
        ("我主要写 Go。", "今年我的主力语言转到了 Rust。"),
        ("我的车是一辆大众朗逸。", "上个月把朗逸卖了，现在开比亚迪汉。"),
        ("I keep my notes in OneNote.", "I switched my notes over to Logseq in May."),
        # A break-up or living alone ends a relationship status.
        ("I'm dating a nurse from Leith.", "We split up over the summer."),
        ("I'm engaged to Tom.", "I'm by myself these days."),
        ("我和女朋友在谈恋爱。", "我们上个月分手了。"),
        ("我已经结婚了。", "离婚以后我一个人过。"),
    ],
)
def test_an_update_is_found_by_its_class_of_phrasing(old: str, new: str) -> None:
    found = compare(new, old)
    assert found is not None and found[0] == "update", (old, new, found)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I'm based in Porto.", "Porto has been home for a decade."),
        ("Our design review is Tuesday at 11am.", "Design review is still on Tuesday at 11am."),
        ("我的导师是张教授。", "张教授是我的导师，人很好。"),
        ("我们用 Jira 管理缺陷。", "我们用 Confluence 管理文档。"),
    ],
)
def test_agreeing_or_complementary_statements_are_no_update(old: str, new: str) -> None:
    found = compare(new, old)
    assert found is None or found[0] == "agree", (old, new, found)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("My dentist is Dr. Weber.", "My sister's dentist is Dr. Okoye."),
        ("Zed is my IDE.", "I'd love to make Helix my IDE someday."),
        ("I'm based in Porto.", "I used to be based in Lisbon."),
        ("我的导师是张教授。", "我妈妈的导师是李教授。"),
        ("我的导师是张教授。", "我以前的导师是李教授。"),
        ("我住在杭州。", "我想搬到成都。"),
        # Someone else's things in English too.
        ("I use a Pixel 8.", "My sister uses an iPhone."),
        ("I keep my notes in Bear.", "He keeps his notes in Obsidian."),
        # An opinion about the thing names no new value.
        ("My boss is Priya Nair.", "My boss is brilliant."),
        ("My laptop is a Framework 13.", "My laptop is noisy these days."),
        ("我的导师是张教授。", "我的导师是新来的。"),
    ],
)
def test_someone_else_a_wish_or_the_past_sets_no_current_value(old: str, new: str) -> None:
    assert compare(new, old) is None


def test_things_that_share_a_word_are_one_attribute() -> None:
    assert same_attribute("decision:state management", "decision:state")
    assert same_attribute("decision:需求", "decision:需求管理")
    assert not same_attribute("decision:state", "schedule:state")
    assert not same_attribute("decision:event streaming", "decision:consumer")


@pytest.mark.parametrize(
    ("question", "attribute"),
    [
        ("Who is my dentist?", "dentist"),
        ("Who do I report to?", "manager"),
        ("Which university am I at?", "university"),
        ("What laptop do I use for work?", "laptop"),
        ("Which app do I take notes in?", "notes"),
        ("How big is my team these days?", "team_size"),
        ("What time do I go to bed?", "bedtime"),
        ("我现在的领导是谁？", "manager"),
        ("我的导师是谁？", "导师"),
        ("我在哪所学校读书？", "university"),
        ("我用什么笔记本电脑？", "laptop"),
        ("我现在用什么记笔记？", "notes"),
        ("我们组里有多少人？", "team_size"),
    ],
)
def test_questions_name_the_attribute_by_class(question: str, attribute: str) -> None:
    assert attribute in asked_attributes(question)


@pytest.mark.parametrize(
    "question",
    ["Which school do my kids go to?", "Who is my sister's manager?", "我妈妈的领导是谁？"],
)
def test_a_question_about_someone_else_asks_for_no_attribute(question: str) -> None:
    assert asked_attributes(question) == frozenset()


@pytest.mark.parametrize(
    "text", ["My tablet is an iPad Mini.", "我的车是一辆五菱宏光。", "现在周报全放在语雀里了。"]
)
def test_the_gate_keeps_a_statement_that_sets_an_attribute(text: str) -> None:
    # A dropped first value leaves nothing for the later update to replace.
    assert gate(text).keep, gate(text).reason


@pytest.mark.parametrize(
    ("old", "new", "verdict"),
    [
        # A value said again inside a longer one agrees; a number inside a longer number, or a
        # word inside a longer word, is another value.
        ("I work at Google.", "I work at Google Zurich now.", "agree"),
        ("我一般一点才睡。", "现在十一点就上床了。", "update"),
        ("I mostly code in Java.", "I mostly code in JavaScript now.", "update"),
    ],
)
def test_a_value_inside_another_is_the_same_only_as_a_whole_word(
    old: str, new: str, verdict: str
) -> None:
    found = compare(new, old)
    assert found is not None and found[0] == verdict
