"""Wallet recovery phrases, raw private keys and two-factor backup codes are redacted.

None of them had a rule (sec3 finding 2): "my seed phrase is witch collapse practice …" was
stored as written, and with it the wallet. Each is found after a word that names it (a seed
phrase, a private key, backup codes); without one, twelve short words or a hex string are
ordinary text and stay.
"""

from __future__ import annotations

import random

import pytest

from memory.gating.gate import gate
from memory.gating.privacy import PrivacyFilter

FILTER = PrivacyFilter()
# Words of the BIP-39 English list (12 of them: a valid length; the rule needs no checksum).
SEED = "witch collapse practice feed shame open despair creek road again ice least"
SEED_24 = SEED + " " + "abandon ability able about above absent absorb abstract absurd abuse access"
SEED_24 += " accident"
HEX_KEY = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
WIF = "5HueCGU8rMjxEXxiPuD5BDku4MkFqeZyd4dZ1jvhTVqvbTLvyTJ"


@pytest.mark.parametrize(
    "template",
    [
        "my seed phrase is {}",
        "Remember that my wallet seed phrase is {}",
        "recovery phrase: {}",
        "Secret Recovery Phrase -> {}",
        "mnemonic: {}",
        "my 12 words are {}",
        "the seed words for my Ledger are {}, keep them safe",
        "seed phrase:\n{}",
    ],
)
def test_a_seed_phrase_after_its_name_is_redacted(template: str) -> None:
    for phrase in (SEED, SEED_24, SEED.replace(" ", ", "), SEED.replace(" ", "\n")):
        result = FILTER.redact(template.format(phrase))
        assert "seed_phrase" in result.kinds, result.text
        assert not any(w in result.text for w in ("witch", "despair", "absurd")), result.text


def test_a_numbered_or_chinese_seed_phrase_is_redacted() -> None:
    numbered = " ".join(f"{i}. {w}" for i, w in enumerate(SEED.split(), 1))
    result = FILTER.redact(f"recovery phrase:\n{numbered}")
    assert "witch" not in result.text and "least" not in result.text, result.text
    chinese = "助记词：" + " ".join("的 一 是 在 不 了 有 和 人 这 中 大")
    assert FILTER.redact(chinese).text == "助记词：[REDACTED:seed_phrase]"


def test_the_gate_stores_no_seed_phrase() -> None:
    decision = gate(f"Remember that my wallet seed phrase is {SEED}", role="user")
    assert "witch" not in decision.content and "least" not in decision.content


@pytest.mark.parametrize(
    "text",
    [
        f"wallet private key {HEX_KEY}",
        f"private key: 0x{HEX_KEY}",
        f"my ETH private key is {HEX_KEY}",
        f"btc private key {WIF}",
        f"私钥：{HEX_KEY}",
    ],
)
def test_a_raw_private_key_after_its_name_is_redacted(text: str) -> None:
    result = FILTER.redact(text)
    assert HEX_KEY not in result.text and WIF not in result.text, result.text
    assert HEX_KEY[-16:] not in result.text and WIF[-16:] not in result.text


@pytest.mark.parametrize(
    ("text", "codes"),
    [
        ("2FA backup codes: 8473-2918 3391-0042 7720-1184", ["8473", "3391", "1184"]),
        ("my backup codes:\n8473 2918\n3391 0042\n7720 1184", ["8473", "0042", "1184"]),
        ("GitHub recovery codes a1b2c-3d4e5 f6a7b-8c9d0", ["a1b2c", "8c9d0"]),
        ("recovery code ABCD-EFGH-IJKL-MNOP", ["ABCD", "MNOP"]),
        ("TOTP secret JBSWY3DPEHPK3PXP", ["JBSWY3DPEHPK3PXP"]),
        ("the 2FA recovery key is 1. K7Q2-9XZ4 2. M3P8-2LW6", ["K7Q2", "2LW6"]),
    ],
)
def test_two_factor_codes_after_their_name_are_redacted(text: str, codes: list[str]) -> None:
    result = FILTER.redact(text)
    assert "recovery_code" in result.kinds, result.text
    assert not any(code in result.text for code in codes), result.text


@pytest.mark.parametrize(
    "text",
    [
        "I wrote my seed phrase on a metal plate and put it in the safe at home",
        "never type your recovery phrase into a website, no support agent will ask for it",
        "I printed my backup codes yesterday",
        "my backup codes are in the drawer",
        "the recovery key is stored in my safe",
        "backup codes 2023 edition",
        "commit 4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318 was reverted",
        " ".join(SEED.split() * 2),  # twelve short words and no cue: ordinary text
        "how do I rotate the private key for the staging certificate?",
    ],
)
def test_talk_about_wallets_and_codes_is_left_alone(text: str) -> None:
    assert FILTER.clean(text) == text


def test_random_twelve_word_phrases_after_a_cue_are_redacted() -> None:
    rng = random.Random(7)
    words = SEED_24.split()
    for _ in range(50):
        phrase = " ".join(rng.choice(words) for _ in range(rng.choice([12, 15, 18, 21, 24])))
        result = FILTER.redact(f"my seed phrase is {phrase}. thanks")
        assert result.text == "my seed phrase is [REDACTED:seed_phrase]. thanks", result.text
