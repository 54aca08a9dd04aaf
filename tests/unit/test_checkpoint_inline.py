"""Which checkpoint saves are redacted on the event loop: only small ones, metadata included."""

from __future__ import annotations

from agent.checkpointer import _text_chars


def test_small_values_are_counted_whole() -> None:
    # One per container and per non-text item, the length of each string.
    assert _text_chars({"source": "loop", "step": 3}, 2_000) == 1 + 6 + 4 + 4 + 1
    assert _text_chars(["ab", ("cd", "e")], 2_000) == 1 + 2 + 1 + 2 + 1


def test_client_metadata_past_the_limit_is_reported_past_it() -> None:
    hostile = {"note": "x" * 100_000, "tags": ["y" * 10] * 10_000}
    assert _text_chars(hostile, 2_000) > 2_000


def test_counting_a_huge_deep_value_stops_early() -> None:
    deep: object = "z"
    for _ in range(50_000):
        deep = [deep, "pad" * 10]
    # The whole value holds 1.6 million characters; counting stops within one string of the limit.
    assert 2_000 < _text_chars(deep, 2_000) <= 2_000 + 30
