"""Redaction sees through disguises: encodings, spelled-out runs, invisible characters, languages.

Secrets of every token class are generated at random, then disguised the ways a hostile user
would (base64, base64url, hex, percent-encoding, spelled out with any separator, invisible
characters at random places inside, hex bytes spaced or escaped, full-width letters, one
disguise inside another) and put in random sentences;
passwords are stated in English, Spanish, French, German, Portuguese and Chinese, and in the
"creds: user / password", "user pass", "user:password@host" forms. Neither the secret nor its
disguise may survive, and text around it is kept as written. Ordinary encoded text (images,
hashes, colours, encoded prose, URLs) is left alone.
"""

from __future__ import annotations

import base64
import json
import random
import string
import urllib.parse
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memory.gating.privacy import PrivacyFilter
from memory.gating.privacy.disguise import MAX_RUNS, reading
from memory.gating.privacy.filter import _replace

FILTER = PrivacyFilter()
_ALNUM = string.ascii_letters + string.digits
INVISIBLES = ["\u200b", "\u200c", "\u200d", "\u00ad", "\u2060", "\ufeff", "\u202e", "\u2066",
              "\ufe0f", "\u034f", "\U000e0041", "\u180e"]  # fmt: skip


def _run(rng: random.Random, n: int, alphabet: str = _ALNUM) -> str:
    mix = [c for c in "aZ7" if c in alphabet]  # mixed case and a digit where the class has them
    body = [rng.choice(alphabet) for _ in range(n - len(mix))] + mix
    rng.shuffle(body)
    return "".join(body)


def _token(rng: random.Random, kind: str) -> str:
    """A random secret of one token class, in the shape the rules know."""
    if kind == "openai":
        return "sk-" + rng.choice(["", "proj-", "live-"]) + _run(rng, rng.randint(24, 48))
    if kind == "stripe":
        return rng.choice(["sk", "rk"]) + rng.choice(["_live_", "_test_"]) + _run(rng, 24)
    if kind == "github":
        return rng.choice(["ghp_", "gho_", "ghs_"]) + _run(rng, 36)
    if kind == "aws_id":
        return rng.choice(["AKIA", "ASIA"]) + _run(rng, 16, string.ascii_uppercase + "234567")
    if kind == "slack":
        return "xoxb-" + "".join(rng.choice(string.digits) for _ in range(11)) + "-" + _run(rng, 20)
    return "AIza" + _run(rng, 35)


def _percent(rng: random.Random, text: str) -> str:
    # Every escape at least twice, the rest of the characters escaped at random.
    out = [f"%{b:02X}" if (i < 2 or rng.random() < 0.5) else chr(b)
           for i, b in enumerate(text.encode())]  # fmt: skip
    return "".join(out)


def _disguise(rng: random.Random, secret: str, how: str) -> str:
    if how == "base64":
        return base64.b64encode(secret.encode()).decode()
    if how == "base64url":
        return base64.urlsafe_b64encode(secret.encode()).decode().rstrip("=")
    if how == "hex":
        text = secret.encode().hex()
        return text.upper() if rng.random() < 0.5 else text
    if how == "percent":
        return _percent(rng, secret)
    if how == "spelled":
        # As people spell: "s k - l i v e", "s.k.-.l", "s-k---l", "s, k, -, l".
        return rng.choice([" ", "  ", "-", ".", ", ", " . "]).join(secret)
    if how == "hex bytes":
        sep = rng.choice([" ", ":", "-"])
        return sep.join(f"{b:02x}" if rng.random() < 0.5 else f"{b:02X}" for b in secret.encode())
    if how == "escapes":
        return "".join(f"\\x{b:02x}" for b in secret.encode())
    if how == "0x":
        return "0x" + secret.encode().hex()
    if how == "full-width":
        return "".join(chr(ord(c) + 0xFEE0) if rng.random() < 0.7 else c for c in secret)
    if how == "invisible":
        chars = list(secret)
        for _ in range(rng.randint(1, 4)):
            at = rng.randint(1, len(chars) - 1)
            chars.insert(at, rng.choice(INVISIBLES) * rng.randint(1, 2))
        return "".join(chars)
    # nested: hex of a base64 text, or base64 of a text with invisible characters inside
    inner = _disguise(rng, secret, rng.choice(["base64", "invisible"]))
    return _disguise(rng, inner, rng.choice(["hex", "base64"]))


_HOW = [
    "base64",
    "base64url",
    "hex",
    "percent",
    "spelled",
    "invisible",
    "nested",
    "hex bytes",
    "escapes",
    "0x",
    "full-width",
]
_KINDS = ["openai", "stripe", "github", "aws_id", "slack", "google"]
_CONTEXTS = ["{}", "here you go: {}", "the key ({how}) is {}, keep it", "{} <- ci token",
             "使用这个：{}。", "la clave va aquí: {} gracias", "'{}'", "[{}]",
             "key={}&x=1"]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.randoms(use_true_random=False), st.sampled_from(_KINDS), st.sampled_from(_HOW),
       st.sampled_from(_CONTEXTS))  # fmt: skip
def test_disguised_tokens_are_redacted(rng: random.Random, kind: str, how: str, ctx: str) -> None:
    secret = _token(rng, kind)
    disguised = _disguise(rng, secret, how)
    text = ctx.format(disguised, how=how)
    result = FILTER.redact(text)
    assert secret not in result.text and disguised not in result.text, (text, result.text)
    assert "[REDACTED:" in result.text, (text, result.text)
    # What is around the disguise is kept as written.
    before, _, after = ctx.partition("{}")
    assert result.text.startswith(before.format(how=how)) and result.text.endswith(after)


_PASSWORD_PHRASES = [
    "mi contraseña es {}", "La contraseña del wifi es {} ok", "contraseña: {}",
    "clave de acceso: {}", "mon mot de passe est {}", "le mdp du NAS : {}",
    "Le mot de passe du routeur c'est {}", "Mein Passwort ist {}", "Das Kennwort lautet {}",
    "WLAN-Passwort: {}", "Kennwort = {}", "a senha do email é {}", "senha: {}",
    "登录密码：{}", "口令是{}", "creds: deploy / {}", "creds - ops / {}", "login: ops pass: {}",
    "username jdoe password {}", "user: bob, pw: {}", "ssh root:{}@10.2.3.4",
    "postgres://svc:{}@db.internal:5432/app", "https://me:{}@git.example.com/repo.git",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(_PASSWORD_PHRASES),
    st.text(alphabet=_ALNUM + "!#%*_-", min_size=7, max_size=18).filter(
        lambda v: any(c.isdigit() for c in v) and any(c.isalpha() for c in v)
    ),
    st.sampled_from(["plain", "hex", "base64", "invisible"]),
)
def test_passwords_in_five_languages_and_credential_forms(
    phrase: str, password: str, how: str
) -> None:
    statement = phrase.format(password)
    rng = random.Random(password)
    # Disguised whole ("the phrase and its value, hex-encoded") or only the value's characters.
    text = statement if how == "plain" else _disguise(rng, statement, how)
    if how != "invisible":
        text = f"note for later: {text} thanks"
    result = FILTER.redact(text)
    assert password not in result.text, (text, result.text)
    # An encoded run may also look like a key as written (40 base64 characters): either name.
    assert "password" in result.kinds or (how != "plain" and result.kinds), (text, result.text)


_BENIGN = [
    # An inline image, a git SHA, a SHA-256, a UUID, colours, encoded prose, a percent-encoded
    # search and path, letters spelled for clarity, an ordinary base64 blob of random bytes.
    "data:image/png;base64," + base64.b64encode(bytes(range(256)) * 3).decode(),
    "fixed in 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "trace 550e8400-e29b-41d4-a716-446655440000",
    "use #1E90FF, #ff8800 and #c0ffee",
    "greeting " + base64.b64encode(b"the meeting moved to Thursday at ten").decode(),
    "hex " + b"we prefer short answers in the morning".hex(),
    "see https://example.com/?q=" + urllib.parse.quote("café latte für zwei"),
    "the file /docs/Quarterly%20Plan%202025%20v2.pdf",
    "call sign: A L P H A B R A V O",
    "my initials are J. R. R. T., since forever",
    "Ich habe das Passwort geändert, es ist jetzt länger.",
    "¿Olvidaste la contraseña? Pide un enlace nuevo.",
    "Le mot de passe est trop court, ajoute des chiffres.",
    "Family 👨\u200d👩\u200d👧 and a heart ❤\ufe0f",
    "MAC 00:1a:2b:3c:4d:5e, phone 12-34-56-78-90-12",
    "你好！！！！ 我在ＡＢＣ公司，电话是总机。",
]


def test_ordinary_encoded_and_multilingual_text_is_left_alone() -> None:
    rng = random.Random(7)
    blob = base64.b64encode(bytes(rng.randrange(256) for _ in range(300))).decode()
    for text in [*_BENIGN, f"attachment {blob}"]:
        result = FILTER.redact(text)
        assert result.text == text and result.findings == [], (text, result.text)
    # "word:name@host" without a digit or symbol is an address, not credentials.
    assert FILTER.redact("write to note:bob@example.com").kinds == ("email",)


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["%", "%FF", "%C3", "%28", "%E2%80%8B", "%41", "=", "==", "-", "_", "/", "+", " ",
             " - ", ".", "A", "z", "9", "f", "\ud800", "\x00", "\u200b", "\ufe0f", "\u202e",
             "QUtJQQ", "c2st", "6d79", "AKIA", "sk-", "password is ", "contraseña: ", "我"]
        ),
        max_size=60,
    ).map("".join)
)  # fmt: skip
def test_hostile_shapes_never_break_redaction(text: str) -> None:
    # Broken escapes, lone surrogates, NULs, invisible characters and encoded fragments in any
    # order: redaction answers (it guards every write), and its answer is stable.
    once = FILTER.clean(text)
    assert FILTER.clean(once) == once


def test_an_operator_pattern_that_matches_empty_text_redacts_only_text() -> None:
    # "x*" matches the empty string everywhere: only real matches become placeholders, in
    # `redact` and in `spans` (which maps matches back and must not wrap around to the end).
    privacy = PrivacyFilter(["x*"])
    assert privacy.clean("abc xx d") == "abc [REDACTED:custom] d"
    assert privacy.spans("xx abc") == [(0, 2, "custom")]


def test_the_creds_form_takes_any_value() -> None:
    # "correct" is no password after "the password is"; after "creds: name /" it is one.
    for text in ["creds: alice / correct", "login: ops / wrong", "credentials - bob / sunshine"]:
        result = FILTER.redact(text)
        assert result.text.endswith("[REDACTED:password]"), result.text


def test_invisible_characters_elsewhere_are_kept_and_only_the_secret_goes() -> None:
    text = "Family 👨\u200d👩\u200d👧 ok; key AKIA\u200bQW3ER5TY7UI9OP1A\u2060 and ❤\ufe0f"
    result = FILTER.redact(text)
    assert result.text == "Family 👨\u200d👩\u200d👧 ok; key [REDACTED:aws_key]\u2060 and ❤\ufe0f"


def test_a_card_spelled_out_and_its_code_stay_high_risk() -> None:
    text = "card " + " ".join("4242424242424242") + " cvv 123"
    result = FILTER.redact(text)
    assert "card" in result.kinds and result.high_risk and "4 2 4 2" not in result.text


def test_decoding_is_bounded_per_text() -> None:
    # Many encoded secrets in one text: the first MAX_RUNS are decoded, the rest left to the
    # rules as written; the work stays bounded whatever the count.
    encoded = base64.b64encode(b"password: Hunter22x").decode()
    text = " ".join([encoded] * (MAX_RUNS + 10))
    result = FILTER.redact(text)
    assert result.text.count("[REDACTED:password]") == MAX_RUNS
    assert reading("plain words only, nothing encoded here") is None


def test_spans_find_what_redact_removes_on_the_corpus() -> None:
    # `spans` (used on readings and on a thread's joined messages) removes every secret of the
    # corpus and touches no negative, as `redact` does. (Disguised items: the tests above.)
    corpus = Path(__file__).resolve().parents[1] / "data" / "pii_corpus.jsonl"
    items = [json.loads(line) for line in corpus.read_text("utf-8").splitlines() if line]
    plain = [i for i in items if reading(i["text"]) is None]
    assert len(plain) > 150
    for item in plain:
        spans = FILTER.spans(item["text"])
        kept = _replace(item["text"], spans, [])
        assert all(s not in kept for s in item["secrets"]), (item["text"], kept)
        assert bool(spans) == bool(item["secrets"]), item["text"]
