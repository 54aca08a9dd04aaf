import hashlib

import pytest

from memory.working.sensory import (
    InputError,
    classify_turn,
    detect_language,
    extract_features,
    normalise_input,
)


def test_strips_control_characters_but_keeps_newline_and_tab() -> None:
    raw = "he\x00llo\x07\x1b\x7f\x85 world\n\tindented\u202eevil\ufeff"
    assert normalise_input(raw) == "hello world\n\tindentedevil"


def test_crlf_becomes_lf_and_blank_edges_go() -> None:
    assert normalise_input("\r\n\n  line one\r\nline two\r  \n\n") == "  line one\nline two"


def test_bytes_are_decoded_with_replacement() -> None:
    assert normalise_input(b"caf\xc3\xa9 \xff ok") == "café \ufffd ok"


def test_lone_surrogates_replaced_pairs_joined() -> None:
    assert normalise_input("a\ud83d\ude00b\udc00c") == "a\U0001f600b\ufffdc"


def test_nfc_normalisation() -> None:
    assert normalise_input("cafe\u0301") == "caf\u00e9"


@pytest.mark.parametrize("raw", ["", "   ", "\n\t\n", "\x00\x01\x02", b"", b"   "])
def test_empty_input_is_rejected(raw: str | bytes) -> None:
    with pytest.raises(InputError) as info:
        normalise_input(raw)
    assert info.value.reason == "empty"
    assert "empty" in str(info.value)


def test_non_text_is_rejected() -> None:
    with pytest.raises(InputError) as info:
        normalise_input(123)  # type: ignore[arg-type]
    assert info.value.reason == "not_text"


def test_overflow_truncates_by_default() -> None:
    assert normalise_input("abcdefghij" * 3, max_chars=12) == "abcdefghijab"


def test_overflow_reject() -> None:
    with pytest.raises(InputError) as info:
        normalise_input("x" * 65_000, on_overflow="reject")
    assert info.value.reason == "too_long"
    assert "64,000" in str(info.value)


def test_default_limit_allows_64k() -> None:
    assert len(normalise_input("y" * 64_000, on_overflow="reject")) == 64_000


def test_features() -> None:
    text = "How do I run this?\n```python\nprint('hi')\n```\nsee https://example.com/docs"
    f = extract_features(text)
    assert f["length"] == len(text)
    assert f["tokens"] > 10
    assert f["has_code"] and f["has_url"] and f["is_question"]
    assert f["language"] == "en"
    assert f["sha256"] == hashlib.sha256(text.encode()).hexdigest()


def test_features_plain_statement() -> None:
    f = extract_features("The meeting moved to Thursday")
    assert not f["has_code"] and not f["has_url"] and not f["is_question"]


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("Please write the weekly report", "en"),
        ("请帮我写一份周报", "zh"),
        ("帮我写一个Python函数", "zh"),
        ("请把 the weekly report 发给 the whole team", "mixed"),
        ("Use the 用户画像 table and the orders table for this report", "en"),  # one zh term
        ("12345 !!!", "en"),
        ("Привет, как дела", "en"),  # non-CJK scripts count as "en" (Latin/other)
    ],
)
def test_language(text: str, lang: str) -> None:
    assert detect_language(text) == lang


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("What is the capital of France", "question"),
        ("Is the build green?", "question"),
        ("这个接口怎么调用？", "question"),
        ("周报什么时候发", "question"),
        ("Write a function that parses ISO dates", "instruction"),
        ("Can you write a haiku about autumn?", "instruction"),
        ("New task: build a report generator. Never use the production database.", "instruction"),
        ("帮我写一个Python函数，必须使用类型注解", "instruction"),
        ("Migrate the DB. Never drop tables.", "instruction"),  # a task with a rule
        ("I prefer TypeScript examples", "preference"),
        ("From now on answer in English", "preference"),
        ("Never use the production database.", "preference"),
        ("我喜欢简洁的回答", "preference"),
        ("以后都用中文回复", "preference"),
        ("不要使用全局变量", "preference"),
        ("No, I meant Python 3.12", "correction"),
        ("Actually the deadline is Friday", "correction"),
        ("That's not what I asked", "correction"),
        ("不对，是上周五", "correction"),
        ("hi!", "chitchat"),
        ("thanks a lot".split()[0], "chitchat"),
        ("Good morning", "chitchat"),
        ("好的", "chitchat"),
        ("谢谢！", "chitchat"),
        ("lol", "chitchat"),
    ],
)
def test_classify_turn(text: str, kind: str) -> None:
    assert classify_turn(text) == kind
