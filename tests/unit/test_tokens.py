from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage

from memory.working.tokens import (
    MESSAGE_OVERHEAD,
    count_message_tokens,
    count_messages_tokens,
    count_tokens,
    truncate_to_tokens,
)

TEXT = st.text(
    alphabet=st.characters(codec="utf-8", categories=("L", "N", "P", "S", "Zs", "Cc")),
    max_size=300,
)


def test_empty_is_zero() -> None:
    assert count_tokens("") == 0


def test_overestimates_known_bpe_counts() -> None:
    # cl100k_base counts: 2 and 10 tokens. The estimate must never be below them.
    assert count_tokens("hello world") >= 2
    assert count_tokens("The quick brown fox jumps over the lazy dog.") >= 10
    # ... but stays close for prose (within +50 %), or budgets would waste space.
    assert count_tokens("The quick brown fox jumps over the lazy dog.") <= 15


def test_cjk_counts_one_per_character() -> None:
    text = "帮我写一个函数"
    assert count_tokens(text) == len(text)
    # Mixed text: CJK characters plus Latin pieces.
    assert count_tokens("用Python写") == 3  # 用, Python, 写


def test_digits_and_symbols_are_not_free() -> None:
    assert count_tokens("1234567890") >= 4  # BPE groups digits by three
    assert count_tokens('{"a":1,"b":2}') >= 11


def test_long_word_costs_more_than_one_token() -> None:
    assert count_tokens("internationalization") >= 3


def test_message_tokens_include_overhead_and_tool_calls() -> None:
    plain = AIMessage("done")
    with_call = AIMessage(
        "done", tool_calls=[{"name": "search", "args": {"query": "weekly report"}, "id": "c1"}]
    )
    assert count_message_tokens(plain) == MESSAGE_OVERHEAD + count_tokens("done")
    assert count_message_tokens(with_call) > count_message_tokens(plain) + 3
    blocks = HumanMessage(content=[{"type": "text", "text": "hello there"}, "again"])
    assert count_message_tokens(blocks) == MESSAGE_OVERHEAD + count_tokens("hello there\nagain")
    assert count_messages_tokens([plain, blocks]) == count_message_tokens(
        plain
    ) + count_message_tokens(blocks)


@given(TEXT, st.integers(min_value=0, max_value=80))
@settings(max_examples=200, deadline=None)
def test_truncate_prefix_fits(text: str, limit: int) -> None:
    cut = truncate_to_tokens(text, limit)
    assert text.startswith(cut)
    assert count_tokens(cut) <= limit
    if count_tokens(text) <= limit:
        assert cut == text


@given(TEXT, st.integers(min_value=0, max_value=80))
@settings(max_examples=200, deadline=None)
def test_truncate_suffix_fits(text: str, limit: int) -> None:
    cut = truncate_to_tokens(text, limit, from_end=True)
    assert text.endswith(cut)
    assert count_tokens(cut) <= limit


def test_truncate_is_maximal() -> None:
    text = "word " * 100
    cut = truncate_to_tokens(text, 20)
    assert count_tokens(cut) <= 20
    assert count_tokens(text[: len(cut) + 1]) > 20


@given(TEXT, TEXT)
@settings(max_examples=300, deadline=None)
def test_joining_costs_at_most_one_extra_token(a: str, b: str) -> None:
    # The composer relies on this: a block joined with "\n" or "\n\n" costs <= parts + 1.
    for sep in ("\n", "\n\n"):
        assert count_tokens(a + sep + b) <= count_tokens(a) + count_tokens(b) + 1


def test_monotone_in_prefix_length() -> None:
    text = "Deploy 12345 items to 東京 at 09:30, then 确认 the result!"
    counts = [count_tokens(text[:i]) for i in range(len(text) + 1)]
    assert counts == sorted(counts)
