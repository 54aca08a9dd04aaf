"""Secrets split across a thread's user messages are found by joining the messages.

Keys of several classes are cut at random points into two or three pieces, each sent in its own
message with chatter around it; passwords are announced in one message (in five languages) and
given in the next; a card number comes in two halves. Every piece must be reported for
redaction, in the message that holds it. Ordinary conversations (ids, versions, commit hashes,
words spread over turns) report nothing. Through the server: `test_secrets_at_rest.py`.
"""

from __future__ import annotations

import random
import string
import time

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage

from agent.split_secrets import split_parts
from memory.gating.privacy.patterns import luhn_ok
from memory.gating.privacy.splits import split_secrets

_B64 = string.ascii_letters + string.digits + "/+"


def _aws_secret(rng: random.Random) -> str:
    body = [rng.choice(_B64) for _ in range(37)] + ["q", "Z", "4"]
    rng.shuffle(body)
    return "".join(body)


def _key(rng: random.Random, kind: str) -> str:
    alnum = string.ascii_letters + string.digits
    if kind == "aws_secret":
        return _aws_secret(rng)
    if kind == "github":
        return "ghp_" + "".join(rng.choice(alnum) for _ in range(33)) + "a1Z"
    return "sk-live-" + "".join(rng.choice(alnum) for _ in range(29)) + "x9Q"


_CHATTER = [("{}", "{}"), ("first part: {}", "and the rest: {}"),
            ("keep this safe {}", "{} <- that finishes it"),
            ("la primera mitad es {}", "y la segunda {}"),
            ("前半部分 {}", "后半部分 {}")]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.randoms(use_true_random=False), st.sampled_from(["aws_secret", "github", "openai"]),
       st.sampled_from(_CHATTER), st.integers(2, 3), st.booleans())  # fmt: skip
def test_a_key_in_pieces_is_found_in_every_piece(
    rng: random.Random, kind: str, chatter: tuple[str, str], n: int, between: bool
) -> None:
    key = _key(rng, kind)
    cuts = sorted(rng.sample(range(6, len(key) - 6), n - 1))
    pieces = [key[a:b] for a, b in zip([0, *cuts], [*cuts, len(key)], strict=True)]
    # Out of scope: a piece shorter than a fragment, or one that reads as a word ("abcdef")
    # amid chatter (alone in its message it still counts).
    words = [p for p in pieces if p.isalpha() and p[1:].islower()]
    if any(len(p) < 6 for p in pieces) or (words and chatter != ("{}", "{}")):
        return
    texts = [chatter[0].format(pieces[0])]
    texts += [chatter[1].format(p) for p in pieces[1:]]
    if between:
        texts = ["hello, one thing first", *texts]
    found = split_secrets(texts)
    for piece, text, spans in zip(pieces, texts[-n:], found[-n:], strict=True):
        at = text.index(piece)
        assert any(s <= at and at + len(piece) <= e for s, e, _ in spans), (texts, found)


_ANNOUNCE = ["my password is", "the wifi password:", "mi contraseña es", "mon mot de passe est",
             "Mein Passwort ist", "Kennwort:", "密码是", "creds: admin /"]  # fmt: skip


@settings(max_examples=200, deadline=None)
@example("my password is", "0000A!!")
@given(
    st.sampled_from(_ANNOUNCE),
    st.text(alphabet=string.ascii_letters + string.digits + "!#_-", min_size=7, max_size=16)
    .filter(lambda v: any(c.isdigit() for c in v) and any(c.isalpha() for c in v)),
)  # fmt: skip
def test_a_password_announced_then_given_is_found(announce: str, password: str) -> None:
    found = split_secrets(["hi", announce, password])
    # A final "!" (or a run of them: "0000A!!") may read as the sentence's, as it does when
    # both are in one message; everything before it is the password.
    assert found[2] and found[2][0][0] == 0, found
    assert found[2][0][1] >= min(len(password) - 1, len(password.rstrip("!"))), found


def test_a_card_in_two_halves_and_the_state_messages_are_redacted() -> None:
    rng = random.Random(3)
    while True:
        digits = "4" + "".join(str(rng.randrange(10)) for _ in range(15))
        if luhn_ok(digits):
            break
    first, second = f"{digits[:4]} {digits[4:8]}", f"{digits[8:12]} {digits[12:]}"
    messages = [HumanMessage(f"the company card is {first}", id="h1"), AIMessage("ok", id="a1")]
    current = HumanMessage(f"{second} for the hotel", id="h2")
    replaced, parts = split_parts([*messages, current], current)
    assert {m.id for m in replaced} == {"h1", "h2"}
    assert set(parts) == {first, second}
    for message in replaced:
        assert first not in str(message.content) and second not in str(message.content)
        assert "[REDACTED:card]" in str(message.content)


def test_ordinary_conversations_report_nothing() -> None:
    threads = [
        ["I moved to Lisbon in 2021", "the deploy window is thursday", "build 2024-rc1 passed"],
        ["see ticket ABC-12345", "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed it"],
        ["version 2.14.3 needs Python 3.11", "and node 20.11.1", "plus postgres 16.2"],
        ["my password is", "wrong again, send me a reset link"],
        ["request a1b2c3d4-e5f6-4711-8899-aabbccddeeff",
         "retry b2c3d4e5-f6a7-4812-9900-ffeeddccbbaa"],
        ["Mein Passwort ist", "zu kurz, sagt die Seite"],
        ["room 4.12 from 10.30", "to 11.45 on floor 3"],
    ]  # fmt: skip
    for texts in threads:
        assert split_secrets(texts) == [[] for _ in texts], texts


@pytest.mark.parametrize("token", ["x", "a1 ", "ab/", "密码是 ", "sk-"])
def test_the_join_costs_the_same_for_long_messages(token: str) -> None:
    # Only the head and tail of each message and fragments of key size take part: four
    # 64,000-character messages cost about what four of 8,000 do (it was 0.5 s, 8x, when a
    # whole message could be one fragment).
    def cost(n: int) -> float:
        texts = [(token * n)[:n]] * 4
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            split_secrets(texts)
            best = min(best, time.perf_counter() - start)
        return best

    small, big = cost(8_000), cost(64_000)
    assert big < 3 * small + 0.05, (token, small, big)


@pytest.mark.parametrize("before", range(0, 7))
def test_a_whole_history_is_joined_at_every_offset(before: int) -> None:
    # An import reads the whole history at once: the two halves are found wherever they sit.
    from memory.gating.privacy.splits import without_split_secrets

    texts = ["We talked about the garden."] * before + [
        "the password for the NAS is", "Hunter2Hunter2!x", "Thanks, that's all."
    ]  # fmt: skip
    out = without_split_secrets(texts)
    assert "Hunter2Hunter2" not in " ".join(out)
    assert out[before + 1] == "[REDACTED:password]" and out[: before + 1] == texts[: before + 1]
