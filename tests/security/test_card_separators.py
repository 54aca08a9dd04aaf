"""A card number is found whatever separates its digit groups, and with its expiry never stored.

Text copied from a PDF, a bank's site or a French or German page brings no-break, thin and
narrow spaces, typographic dashes and other marks between the groups. Before, only a space, a
dot, a tab and an ASCII hyphen were read as separators: with any other, the number (and its
expiry) reached every store (sec3 finding 1). Every Unicode space (category Zs), every dash
(category Pd), the minus sign, underscores, slashes, commas, middle dots and a single line break
are checked here, in the library, through the gate, and through the `remember` path against
real Postgres and Chroma.
"""

from __future__ import annotations

import json
import sys
import unicodedata

import pytest

from memory.gating.gate import gate
from memory.gating.ingest import ingest_text
from memory.gating.privacy import PrivacyFilter
from memory.storage.store import MemoryStore
from memory.types import Scope
from tests.integration import test_write_path

FILTER = PrivacyFilter()
GROUPS = ["4111", "1111", "1111", "1111"]  # a Luhn-valid test number
AMEX = ["3782", "822463", "10005"]


def _category(name: str) -> list[str]:
    return [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == name]


SPACES = _category("Zs")  # U+0020, U+00A0, U+1680, U+2000-U+200A, U+202F, U+205F, U+3000
DASHES = [*_category("Pd"), "\u2212"]  # every dash, the minus sign
MARKS = ["_", "/", ",", "\u00b7", ".", "\t", "\n", "\r\n", " \n", ", ", " - ", "\u00a0-\u00a0"]
SEPARATORS = SPACES + DASHES + MARKS


def test_the_lists_hold_what_the_finding_named() -> None:
    for sep in ("\u00a0", "\u202f", "\u2009", "\u2007", "\u3000", "\u2011", "\u2013", "\uff0d"):
        assert sep in SEPARATORS
    assert len(SPACES) >= 17 and len(DASHES) >= 25


@pytest.mark.parametrize("sep", SEPARATORS, ids=lambda s: "+".join(f"U+{ord(c):04X}" for c in s))
def test_a_card_with_any_separator_is_redacted(sep: str) -> None:
    for groups in (GROUPS, AMEX):
        number = sep.join(groups)
        result = FILTER.redact(f"my card {number} for the hotel")
        assert number not in result.text and "card" in result.kinds, (sep, result.text)
        assert "1111" not in result.text and "822463" not in result.text


@pytest.mark.parametrize("sep", SEPARATORS, ids=lambda s: "+".join(f"U+{ord(c):04X}" for c in s))
def test_a_card_with_its_expiry_is_refused_by_the_gate(sep: str) -> None:
    text = f"Remember my visa card {sep.join(GROUPS)}, it expires 09/27."
    assert FILTER.redact(text).high_risk
    decision = gate(text, role="user")
    assert not decision.keep and "high-risk" in decision.reason
    assert "1111" not in decision.content


def test_a_blank_line_separates_two_numbers() -> None:
    # Four years, one per paragraph, are not a card: a blank line ends a number.
    text = "2019\n\n2020\n\n2021\n\n2022"
    assert FILTER.redact("\n\n".join(GROUPS)).kinds == ()
    assert FILTER.clean(text) == text


def test_ordinary_numbers_with_the_new_separators_are_left_alone() -> None:
    # Luhn still decides: lists, dates and versions written with commas, slashes and
    # underscores keep their digits.
    for text in (
        "we sold 1200, 1300, 1400, 1500 units",  # 1200130014001500 fails Luhn
        "the build 2024_0612_1423_0001 failed",
        "years 2001/2002/2003/2004 and 2019\u00b72020\u00b72021\u00b72022",
        "order 4111-1111 shipped on 2019/2020",
        "1,234,567,890 people came on 12/05/2023",
    ):
        assert FILTER.clean(text) == text, text


def test_an_ssn_with_a_typographic_dash_or_a_slash_is_redacted() -> None:
    for text in ("ssn 078/05/1120", "SSN: 078\u201305\u20131120", "078\u201305\u20131120"):
        result = FILTER.redact(text)
        assert "1120" not in result.text and "ssn" in result.kinds, result.text


# --- the `remember` path against real Postgres and Chroma -------------------------------------

store = test_write_path.store  # the integration tier's fixture: a real, emptied store

BOB = Scope("acme", "bob-card-separators")


async def test_remember_stores_no_card_written_with_unicode_separators(store: MemoryStore) -> None:
    thin = "\u2009".join(GROUPS)
    texts = [
        f"Remember my visa card {sep.join(GROUPS)}, it expires 09/27."
        for sep in ("\u00a0", "\u202f", "\u2013", "\uff0d", "_", "/", "\n")
    ] + [f"I prefer the card {thin} for hotels, remember it."]
    texts.append("I prefer aisle seats on long flights.")  # a control that is stored
    for text in texts:
        await ingest_text(store, BOB, text, require_approval=False)
    async with store.pool.acquire() as conn:
        rows = await conn.fetch("SELECT content FROM memories WHERE user_id = $1", BOB.user_id)
        events = await conn.fetch("SELECT * FROM memory_events WHERE user_id = $1", BOB.user_id)
    assert rows, "nothing was stored: the test would prove nothing"
    documents = await store.index.documents_for(BOB)
    dumped = json.dumps([dict(r) for r in rows] + [dict(e) for e in events], default=str)
    dumped += json.dumps([[d, str(m)] for _, d, m in documents])
    assert "1111" not in dumped, dumped
