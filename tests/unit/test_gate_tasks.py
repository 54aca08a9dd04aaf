"""Requests for this conversation are not memories; the rules they resemble still are."""

from __future__ import annotations

import time

import pytest

from memory.gating.gate import gate
from memory.types import Category

TASKS = [
    "Write a short poem about the sea.",
    "Show me an example with a dataclass.",
    "Write me a cover letter for a bakery job.",
    "Explain list comprehensions like I'm new to Python.",
    "帮我写一个读取 CSV 文件的 Python 函数。",
    "给我写个快速排序。",
]
RULES = [
    ("Write docstrings in Google style.", Category.PREFERENCE),
    ("Make sure every PR has at least two reviewers.", Category.CONSTRAINT),
    ("Write a test for every new function.", None),
    ("代码缩进请统一用四个空格。", Category.PREFERENCE),
    ("Help me plan my wedding in Porto on 14 September.", None),
]


@pytest.mark.parametrize("text", TASKS)
def test_one_off_requests_are_dropped(text: str) -> None:
    decision = gate(text, role="user")
    assert not decision.keep, decision.reason


@pytest.mark.parametrize(("text", "category"), RULES)
def test_rules_and_dated_plans_in_request_form_are_kept(
    text: str, category: Category | None
) -> None:
    decision = gate(text, role="user")
    assert decision.keep, decision.reason
    if category is not None:
        assert decision.category is category


def test_an_assistant_explanation_records_no_failure_but_its_own_action_does() -> None:
    explained = "Sure! A context manager releases resources even on errors."
    assert not gate(explained, role="assistant").keep
    assert not gate("这里是修改后的代码，把循环条件改成了小于等于。", role="assistant").keep
    done = gate("The migration failed at step 3; I rolled it back.", role="assistant")
    assert done.keep and done.category is Category.FAILURE_LESSON


def test_chinese_verdicts_and_told_failures() -> None:
    assert not gate("这个计划挺好的。", role="user").keep
    lesson = gate("上次去日本没提前订票，结果新干线全满了。", role="user")
    assert lesson.keep and lesson.category is Category.FAILURE_LESSON


def test_the_new_patterns_stay_linear_on_hostile_input() -> None:
    hostile = [
        "write a " + "x every " * 20_000,
        "这个" + "好" * 50_000,
        "上次" + "啊" * 50_000 + "结果",
        "结果" + "没" * 50_000,
    ]
    started = time.perf_counter()
    for text in hostile:
        gate(text, role="user")
    # Generous: a linear pass over these is milliseconds; backtracking would take minutes.
    assert time.perf_counter() - started < 20
