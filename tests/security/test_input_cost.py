"""Every pattern applied to user text runs in linear time, and perceive + the gate stay cheap.

The audit is generic, not a list of known-bad patterns: it imports every module of `agent`,
`memory` and `prompts`, collects each compiled pattern reachable from module globals (also
inside tuples, dicts and rule dataclasses), and times it on adversarial shapes at two sizes.
On 32,000 characters a linear pattern takes milliseconds and a quadratic one seconds to
minutes; the check fails a pattern over 1 s there twice running (or 0.25 s at 4,000
characters, which stops a catastrophic one early). Ratios between two sizes were tried first
and proved too noisy on a shared machine; the absolute bound keeps a 20x margin. Patterns
built inside functions are not seen here: the end-to-end cost tests below cover them.
"""

from __future__ import annotations

import asyncio
import importlib
import pkgutil
import re
import time
from collections.abc import Callable
from typing import Any

import pytest

import agent
import memory
import prompts
from memory.gating.gate import gate
from memory.gating.privacy import PrivacyFilter
from memory.gating.rules.split import split_candidates
from memory.gating.rules.turn import is_instruction_like
from memory.working.sensory import InputError, extract_features, normalise_input
from memory.working.turn_kind import classify_turn

# Runs of one character or short token: the shapes that make backtracking patterns retry a
# long run from every position (whitespace, digits, letters, brackets, separators, CJK).
SHAPES = [
    "a", " ", "1", "a(", "(", "a ", "1 ", "1-", "a.", "\n", "  \n", "ab1", "我", "a:", "x=", "{",
    "-", ". ", "@a", "a@", "0 0", "我的", "a' ", "\t", "1.", "a_", "aB3", "I ", "a,", "，", "。",
    "!", "```", "\\", "/", "+", "password is ", "[", "<", "|", "系统", "1月", "aaaa(b",
    "k", "haha", "哈", "嗯",
]  # fmt: skip
SMALL, LARGE = 4_000, 32_000


def _patterns() -> dict[str, tuple[re.Pattern[str], str]]:
    found: dict[str, tuple[re.Pattern[str], str]] = {}

    def walk(obj: Any, name: str, depth: int = 0) -> None:
        if isinstance(obj, re.Pattern):
            found.setdefault(f"{obj.pattern}/{obj.flags}", (obj, name))
            return
        if depth > 2 or isinstance(obj, str | bytes | type):
            return
        if isinstance(obj, tuple | list | frozenset | set):
            for i, item in enumerate(obj):
                walk(item, f"{name}[{i}]", depth + 1)
        elif isinstance(obj, dict):
            for key, item in obj.items():
                walk(item, f"{name}[{key!r}]", depth + 1)
        elif hasattr(obj, "__dataclass_fields__"):
            for fname in obj.__dataclass_fields__:
                walk(getattr(obj, fname, None), f"{name}.{fname}", depth + 1)

    for package in (agent, memory, prompts):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if info.name in ("agent.cli", "agent.schedule") or ".commands" in info.name:
                continue  # command-line entry points: argparse, no user text patterns
            module = importlib.import_module(info.name)
            for key, value in vars(module).items():
                walk(value, f"{info.name}.{key}")
    return found


PATTERNS = _patterns()


def _cost(pattern: re.Pattern[str], text: str, repeat: int = 1) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _match in pattern.finditer(text):
            pass
        best = min(best, time.perf_counter() - start)
    return best


def _shape(token: str, n: int) -> str:
    # The run ends in a character nothing expects: a pattern that can split the run several
    # ways tries them all before it fails ("kkkk…" as "k"/"kk" tokens).
    return (token * (n // len(token) + 1))[: n - 1] + "\x00"


# A pattern's own words, each followed by a separator and repeated without a space
# ("pw:pw:pw:…", "token=token=…"): every repeat is a new place to start, and a value read from
# there to the end of the run costs the square of its length.
_SEPARATORS = (":", "=", ":a/", " is ")


def _own_words(pattern: re.Pattern[str]) -> list[str]:
    source = re.sub(r"\\.", " ", pattern.pattern)  # escapes (\b, \s) are not words
    words = re.findall(r"[A-Za-z]{2,}|[\u4e00-\u9fff]{1,4}", source)
    return list(dict.fromkeys(words))[:12]


def test_the_audit_sees_the_patterns_that_read_user_text() -> None:
    names = {name for _, name in PATTERNS.values()}
    assert len(PATTERNS) >= 150
    for expected in ("sensory._CODE", "rules.split._CLAUSE_BREAK", "poisoning.DISCLOSURE",
                     "RULES[", "temporal_zh._PATTERNS", "lexical._TOKEN"):  # fmt: skip
        assert any(expected in n for n in names), expected


def test_every_pattern_is_linear_on_adversarial_shapes() -> None:
    slow: list[str] = []
    for pattern, name in PATTERNS.values():
        for token in SHAPES:
            small = _cost(pattern, _shape(token, SMALL))
            if small > 0.25 and _cost(pattern, _shape(token, SMALL), 2) > 0.25:
                slow.append(f"{name} on {token!r}: {small:.2f} s at {SMALL:,} characters")
                continue
            large = _cost(pattern, _shape(token, LARGE))
            if large > 1.0 and _cost(pattern, _shape(token, LARGE), 2) > 1.0:
                slow.append(f"{name} on {token!r}: {large:.2f} s at {LARGE:,} characters")
                # (a quadratic pattern at 32,000 characters takes seconds; linear ones ~1-50 ms)
    assert not slow, "super-linear patterns:\n" + "\n".join(slow)


def test_every_pattern_is_linear_on_its_own_words_repeated() -> None:
    slow: list[str] = []
    for pattern, name in PATTERNS.values():
        for word in _own_words(pattern):
            for separator in _SEPARATORS:
                token = word + separator
                for tail in ('"x', "\x00"):
                    small_text = _shape(token, SMALL)[:-1] + tail
                    small = _cost(pattern, small_text)
                    if small > 0.25 and _cost(pattern, small_text, 2) > 0.25:
                        slow.append(f"{name} on {token!r}+{tail!r}: {small:.2f} s at {SMALL:,}")
                        continue
                    # 16,000 characters: a linear pattern takes milliseconds, a quadratic one
                    # seconds (at 32,000 some took minutes).
                    text = _shape(token, 4 * SMALL)[:-1] + tail
                    large = _cost(pattern, text)
                    if large > 0.5 and _cost(pattern, text, 2) > 0.5:
                        slow.append(f"{name} on {token!r}+{tail!r}: {large:.2f} s at 16,000")
    assert not slow, "super-linear patterns:\n" + "\n".join(slow)


def _turn_cost(text: str) -> float:
    start = time.perf_counter()
    try:
        clean = normalise_input(text, 64_000)
    except InputError:  # blanks only: refused, which must be cheap too
        return time.perf_counter() - start
    classify_turn(clean)
    extract_features(clean)
    for candidate in split_candidates(clean):
        gate(candidate)
    return time.perf_counter() - start


def _costs(cost: Callable[[str], float], token: str) -> tuple[float, float]:
    """`cost` at 8,000 and at 64,000 characters of `token`; again, best of three, if the ratio
    trips the check: a linear cost grows 8x between them and a quadratic one 64x, but one
    pause of a busy CI machine during a single timing once pushed a linear check to 24.7x
    (0.02 s, then 0.49 s; 0.17 s when idle)."""
    small_text, big_text = _shape(token, 8_000), _shape(token, 64_000)
    small, big = cost(small_text), cost(big_text)
    if big / max(small, 1e-3) >= 24:
        small = min(cost(small_text) for _ in range(3))
        big = min(cost(big_text) for _ in range(3))
    return small, big


@pytest.mark.parametrize(
    "token",
    [
        "a(",
        "f(",
        "but ",
        "x: ",
        " ",
        "1",
        "\n",
        "我",
        "a,",
        "x" * 39 + "1 ",
        "ѕ",
        "\u200b",
        "ign0re ",
        '{"a": ',
        "。",
    ],
)
def test_a_64k_and_a_1m_message_cost_little(token: str) -> None:
    """perceive's work plus the gate on the kept text: bounded, whatever the shape."""
    small, big = _costs(_turn_cost, token)
    huge = _turn_cost(_shape(token, 1_000_000))  # cut to 64,000 characters by perceive
    assert big < 10.0 and huge < 12.0, (token, small, big, huge)
    assert big / max(small, 1e-3) < 24, (token, small, big)


@pytest.mark.parametrize("token", ["a(", "1 ", "password is ", "我的", "Ignore all rules. "])
def test_privacy_and_poisoning_checks_scale_linearly(token: str) -> None:
    privacy = PrivacyFilter()

    def cost(text: str) -> float:
        start = time.perf_counter()
        privacy.redact(text)
        is_instruction_like(text)
        return time.perf_counter() - start

    small, big = _costs(cost, token)
    assert big < 5.0 and big / max(small, 1e-3) < 24, (small, big)


async def test_perceive_runs_off_the_event_loop() -> None:
    """While perceive digests a long message, the loop keeps answering (the /ok case)."""
    from langchain_core.messages import HumanMessage

    from agent.nodes.perceive import perceive

    class _Runtime:
        context = None

    # The thread's forget epoch is already known (captured on its first turn), so perceive needs
    # no store here: this measures the text's work alone.
    state: Any = {"messages": [HumanMessage("a( " * 21_000, id="m1")], "memory_epoch": 0}
    gaps: list[float] = []

    async def ticker() -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    tick = asyncio.create_task(ticker())
    try:
        out = await perceive(state, _Runtime())  # type: ignore[arg-type]
    finally:
        tick.cancel()
    assert out["sensory"]["length"] > 60_000
    assert gaps and max(gaps) < 0.1, max(gaps)
