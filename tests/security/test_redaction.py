"""Redaction holds for the class, not the example: any separators, phrasings and languages.

Card numbers (Luhn), SSNs, IBANs (mod-97) and AWS secret keys are generated at random and
written the ways people write them; passwords in many phrasings. `memory-agent remember`
goes through the same ingest path as the agent: checked end to end against real Postgres and
Chroma, neither of which may hold a secret afterwards.
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memory.gating.ingest import ingest_text
from memory.gating.privacy import PrivacyFilter
from memory.gating.privacy.patterns import iban_ok, luhn_ok
from memory.storage.store import MemoryStore
from memory.types import Scope
from tests.integration import test_write_path

FILTER = PrivacyFilter()
# Also what a PDF or a word processor puts between the groups (no-break, thin and ideographic
# spaces, typographic dashes) and what people type (underscores, slashes, commas, a line break).
_SEPARATORS = [" ", "  ", ".", "-", " - ", " .", "\t", "\u00a0", "\u202f", "\u2009", "\u3000",
               "\u2013", "\u2014", "\u2011", "\uff0d", "\u2212", "_", "/", ",", ", ", "\u00b7",
               "\n"]  # fmt: skip
_CONTEXTS = [
    "My card is {}.", "use {} for the deposit", "卡号{}，谢谢", "Charge {} please!",
    "{} is the company card", "the number: {} (visa)", "card={}",
]  # fmt: skip


def _luhn_complete(body: str) -> str:
    for check in string.digits:
        if luhn_ok(body + check):
            return body + check
    raise AssertionError("unreachable")


@st.composite
def cards(draw: st.DrawFn) -> str:
    layout = draw(st.sampled_from([(4, 4, 4, 4), (4, 6, 5), (4, 4, 4, 3), (4, 6, 4),
                                   (4, 4, 4, 4, 3)]))  # fmt: skip
    prefix = draw(st.sampled_from(["4", "51", "55", "37", "34", "6011", "36"]))
    length = sum(layout)
    body = prefix + "".join(
        draw(st.sampled_from(string.digits)) for _ in range(length - len(prefix) - 1)
    )
    digits = _luhn_complete(body)
    if len(set(digits)) == 1:
        digits = _luhn_complete("4" + digits[1:-2] + "7")
    groups, at = [], 0
    for size in layout:
        groups.append(digits[at : at + size])
        at += size
    out = groups[0]
    for group in groups[1:]:
        out += draw(st.sampled_from(_SEPARATORS)) + group
    return out


@settings(max_examples=300, deadline=None)
@given(cards(), st.sampled_from(_CONTEXTS))
def test_card_numbers_with_any_separators(card: str, context: str) -> None:
    result = FILTER.redact(context.format(card))
    assert card not in result.text and "card" in result.kinds, (card, result.text)


def _iban(country: str, bban: str) -> str:
    for check in range(100):
        candidate = f"{country}{check:02d}{bban}"
        if iban_ok(candidate):
            return candidate
    raise AssertionError("unreachable")


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["DE", "FR", "GB", "NL", "ES", "IT", "CH", "BE", "PL"]),
    st.text(alphabet=string.digits + "ABCDEFGHJKLMNPRSTUVWXYZ", min_size=12, max_size=26),
    st.booleans(),
    st.sampled_from(["IBAN {}", "pay to {} by Friday", "收款账户 {}", "{}"]),
)
def test_valid_ibans_compact_or_grouped(country: str, bban: str, grouped: bool, ctx: str) -> None:
    iban = _iban(country, bban)
    written = " ".join(iban[i : i + 4] for i in range(0, len(iban), 4)) if grouped else iban
    result = FILTER.redact(ctx.format(written))
    assert written not in result.text and "iban" in result.kinds, (written, result.text)


def test_a_wrong_iban_check_is_left_alone() -> None:
    assert not iban_ok("DE00500105175407324931")
    assert FILTER.redact("ref DE00500105175407324931").kinds == ()


_PASSWORD_PHRASES = [
    "my password is {}", "my pw is {}", "pw: {}", "pwd={}", "the pass word is {}",
    "passwd: {}", "log in with the password {}", "use the pw {} to get in", "enter passcode {}",
    "creds: admin / {}", "credentials: root:{}", "login: ops / {}", "user/pass: bob/{}",
    "password for the wifi is {}", "passphrase: {}", "密码是{}", "我的密码：{}", "用密码{}登录",
    "账号admin密码{}", "口令为{}", "wifi 密码 = {}",
    "password - {}", "password -> {}", "my password? {}", "password {}", "pw {}",
    "my password has always been {}", "password of the wifi is {}", "密码？{}", "密码 -> {}",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(_PASSWORD_PHRASES),
    st.text(
        alphabet=string.ascii_letters + string.digits + "!#%*_-", min_size=6, max_size=18
    ).filter(lambda v: any(c.isdigit() for c in v) and any(c.isalpha() for c in v)),
)
def test_passwords_in_many_phrasings(phrase: str, password: str) -> None:
    result = FILTER.redact(phrase.format(password) + " thanks")
    assert password not in result.text and "password" in result.kinds, result.text


@settings(max_examples=200, deadline=None)
@given(st.randoms(use_true_random=False), st.sampled_from(["{}", "key {} ok", "secret: {}"]))
def test_aws_secret_access_keys_in_free_text(rng: random.Random, ctx: str) -> None:
    alphabet = string.ascii_letters + string.digits + "/+"
    key = "".join(rng.choice(alphabet) for _ in range(37)) + "aZ9"
    key = "".join(rng.sample(key, len(key)))
    result = FILTER.redact(ctx.format(key))
    assert key not in result.text, result.text


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 899).filter(lambda a: a != 666),
    st.integers(1, 99),
    st.integers(1, 9999),
    st.sampled_from([" ", "  ", "-", ".", " - "]),
    st.sampled_from(["SSN {}", "my social security number is {}", "ssn: {}"]),
)
def test_ssn_with_any_separator(area: int, group: int, serial: int, sep: str, ctx: str) -> None:
    ssn = f"{area:03d}{sep}{group:02d}{sep}{serial:04d}"
    result = FILTER.redact(ctx.format(ssn))
    assert ssn not in result.text and "ssn" in result.kinds, result.text


def test_held_out_pii_variants_all_redacted() -> None:
    corpus = Path(__file__).resolve().parents[1] / "data" / "pii_corpus.jsonl"
    items = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines() if line]
    held = [i for i in items if i.get("split") == "heldout"]
    for item in held:
        result = FILTER.redact(item["text"])
        if item["secrets"]:
            assert all(s not in result.text for s in item["secrets"]), result.text
        else:
            assert result.text == item["text"]


# --- the `remember` path against real Postgres and Chroma -------------------------------------

store = test_write_path.store  # the integration tier's fixture: a real, emptied store

ALICE = Scope("acme", "alice-redact")
SECRETS = {
    "4797.5275.5366.1803": "My card is 4797.5275.5366.1803 for the gym.",
    "4205 9741-5653 9570": "Use 4205 9741-5653 9570 for the hotel deposit.",
    "3782 8224 6310 005": "I prefer the amex 3782 8224 6310 005 for travel.",
    "330 77 9502": "My SSN is 330 77 9502, remember it for the tax form.",
    "Blu3Heron": "I prefer that you remember my pw is Blu3Heron",
    "S3cret!x": "creds: admin / S3cret!x for the staging box, I always use it",
    "DE89370400440532013000": "My salary goes to DE89370400440532013000, I prefer that account.",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY": (
        "Our deploy always uses wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY as the secret."
    ),
}


async def test_remember_path_keeps_no_secret_in_postgres_or_chroma(store: MemoryStore) -> None:
    for text in SECRETS.values():
        await ingest_text(store, ALICE, text, require_approval=False)
    async with store.pool.acquire() as conn:
        rows = await conn.fetch("SELECT content FROM memories WHERE user_id = $1", ALICE.user_id)
        events = await conn.fetch("SELECT * FROM memory_events WHERE user_id = $1", ALICE.user_id)
    assert rows, "nothing was stored: the test would prove nothing"
    documents = await store.index.documents_for(ALICE)
    dumped = json.dumps([dict(r) for r in rows] + [dict(e) for e in events], default=str)
    dumped += json.dumps([[d, str(m)] for _, d, m in documents])
    for secret in SECRETS:
        assert secret not in dumped, secret
