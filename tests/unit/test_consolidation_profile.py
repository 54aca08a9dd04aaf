"""The structured profile derived from long-term preferences ."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memory.longterm.profile import derive_profile, extract, profile_rules
from memory.types import MemoryKind, Origin
from tests.unit.test_consolidation_rules import rec


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Please always reply in Chinese", {"language": "zh-CN"}),
        ("请用中文回答", {"language": "zh-CN"}),
        ("I like concise answers as bullet points", {"output_format": "bullet points",
                                                      "verbosity": "concise"}),
        ("Show me an example before the explanation", {"style": "examples-first"}),
        ("Executive summary first in every report", {"report_style": "executive-summary-first"}),
        ("Write the examples in TypeScript, not JavaScript", {"code_language": "typescript"}),
        ("I'm a conservative investor", {"risk_level": "low"}),
        ("我的投资风格比较激进", {"risk_level": "high"}),
        ("Don't use tables", {}),
        ("I had lunch with Maria", {}),
    ],
)  # fmt: skip
def test_extract_reads_fields(text: str, expected: dict[str, str]) -> None:
    assert extract(text) == expected


def test_the_strongest_statement_of_a_field_wins() -> None:
    learned = rec("Reply in English", kind=MemoryKind.PREFERENCE, origin=Origin.LEARNED,
                  confidence=0.95, id="learned")  # fmt: skip
    explicit = replace(learned, content="Reply in German", origin=Origin.EXPLICIT,
                       confidence=0.7, id="explicit")  # fmt: skip
    pinned = replace(learned, content="Answers must be formal", pinned=True, id="pinned")
    profile = derive_profile([learned, explicit, pinned], version=7)
    assert profile.get("language") == "de" and profile.fields["language"].memory_id == "explicit"
    assert profile.get("style") == "formal" and profile.version == 7
    assert profile_rules(profile) == [
        "Reply in de unless the user writes in another language.",
        "Style: formal.",
    ]
    assert derive_profile([]).fields == {}
