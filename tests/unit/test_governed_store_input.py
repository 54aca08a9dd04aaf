"""Hostile values and filters for the governed store: a clear ValueError or a clean result."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from memory.governed_store import _value_text, matches

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["content", "insist", "text", "$x"]), _JSON, max_size=3))
def test_a_value_is_text_or_a_clear_error(value: dict[str, Any]) -> None:
    try:
        text = _value_text(value)
    except ValueError as exc:
        assert "content" in str(exc)
        return
    assert isinstance(text, str) and text.strip()


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.text(max_size=6), _JSON, max_size=4),
    st.dictionaries(
        st.text(max_size=6),
        _JSON | st.dictionaries(st.sampled_from(["$eq", "$ne", "$gt", "$lt", "$in"]), _JSON),
        max_size=3,
    ),
)
def test_filters_never_crash_on_mixed_types(value: dict[str, Any], conditions: Any) -> None:
    try:
        assert matches(value, conditions) in (True, False)
    except ValueError as exc:  # an operator it does not know: said plainly
        assert "unsupported filter operator" in str(exc)


def test_filter_semantics() -> None:
    # What these assertions pin is BaseStore's documented filter semantics.
    value = {"kind": "semantic", "importance": 0.7, "tags": ["a"]}
    assert matches(value, {"kind": "semantic"})
    assert not matches(value, {"kind": "episodic"})
    assert matches(value, {"importance": {"$gte": 0.5, "$lt": 0.8}})
    assert not matches(value, {"importance": {"$gt": 0.7}})
    assert matches(value, {"kind": {"$in": ["semantic", "preference"]}})
    assert matches(value, {"kind": {"$nin": ["episodic"]}})
    assert not matches(value, {"importance": {"$gt": "text"}})  # mixed types: no match
    assert matches(value, {})
