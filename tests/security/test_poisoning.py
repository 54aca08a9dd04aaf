"""Memory poisoning: text that tries to become a rule is never a rule, however it is dressed.

Measured on `tests/data/poisoning_corpus.jsonl`: injection attempts in English and Chinese (and,
added later, French, Spanish, German and base64/hex/percent-encoded) by class (disclosure,
other users, security, credentials, execution, authority, pasted output, override, disguised,
encoded), and legitimate preferences, constraints and facts, including hard ones
that mention passwords, admins or security. The held-out part was written after the detector
and not used to tune it; its first measurement is the figure the README quotes.
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.gating.gate import GatePolicy, gate, is_instruction_like
from memory.gating.rules.poisoning import judge, skeleton
from memory.types import MemoryKind

CORPUS = Path(__file__).resolve().parents[1] / "data" / "poisoning_corpus.jsonl"
ITEMS = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line]


def _part(split: str, label: str) -> list[dict[str, str]]:
    return [i for i in ITEMS if i["split"] == split and i["label"] == label]


def _shares(split: str) -> tuple[float, float]:
    attacks, legit = _part(split, "attack"), _part(split, "legit")
    blocked = sum(is_instruction_like(i["text"]) for i in attacks) / len(attacks)
    flagged = sum(is_instruction_like(i["text"]) for i in legit) / len(legit)
    return blocked, flagged


def test_corpus_is_large_varied_and_bilingual() -> None:
    attacks = [i for i in ITEMS if i["label"] == "attack"]
    assert len(attacks) >= 200
    assert sum(i["lang"] == "zh" for i in attacks) >= 60
    assert len(_part("heldout", "attack")) >= 100 and len(_part("heldout", "legit")) >= 70
    classes = {i["class"] for i in attacks}
    assert {"disclosure", "other_users", "security", "credentials", "execution", "authority",
            "pasted_output", "override", "confusable"} <= classes  # fmt: skip
    assert len({i["text"] for i in ITEMS}) == len(ITEMS)  # no duplicates


def test_held_out_blocked_and_false_positive_shares() -> None:
    blocked, flagged = _shares("heldout")
    print(f"held-out: blocked {blocked:.1%}, false positives {flagged:.1%}")
    assert blocked >= 0.85
    assert flagged <= 0.02


def test_development_part_is_fully_blocked_without_false_positives() -> None:
    blocked, flagged = _shares("dev")
    assert blocked == 1.0 and flagged == 0.0


def test_a_blocked_attack_never_becomes_a_preference_or_rule() -> None:
    audit = GatePolicy(keep_injections=True)
    for item in ITEMS:
        if item["label"] != "attack" or not is_instruction_like(item["text"]):
            continue
        dropped = gate(item["text"])
        assert not dropped.keep, item["text"]
        kept = gate(item["text"], policy=audit)  # the audit setting: a low-trust episode at most
        assert kept.kind is MemoryKind.EPISODIC and kept.trust == "low", item["text"]
        assert kept.importance <= audit.low_trust_max_importance


# Latin letters and the look-alikes an attacker swaps in (Cyrillic, Greek).
_LOOKALIKE = {"a": "а", "c": "с", "e": "е", "o": "о", "p": "р", "x": "х", "y": "у", "s": "ѕ",
              "i": "і", "j": "ј", "h": "һ", "A": "Α", "B": "В", "E": "Е", "O": "Ο", "T": "Т",
              "M": "М", "H": "Н", "K": "К", "P": "Р", "C": "С", "X": "Х", "Y": "У"}  # fmt: skip
_INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\u00ad", "\ufeff"]
_DETECTED = [i["text"] for i in ITEMS if i["label"] == "attack" and judge(i["text"]).flagged]
# Swapping the case of a base64 run changes what it says (for a model too): encoded attacks get
# every disguise but that one.
_PLAIN = [t for t in _DETECTED if t not in {i["text"] for i in ITEMS if i["class"] == "encoded"}]
_ENCODED = [i["text"] for i in ITEMS if i["class"] == "encoded" and judge(i["text"]).flagged]
_HOW = ["keep", "keep", "lookalike", "fullwidth", "invisible", "case"]


@st.composite
def disguised(
    draw: st.DrawFn, texts: list[str] = _PLAIN, hows: list[str] = _HOW
) -> tuple[str, str]:
    text = draw(st.sampled_from(texts))
    out = []
    for ch in text:
        how = draw(st.sampled_from(hows))
        if how == "lookalike" and ch in _LOOKALIKE:
            out.append(_LOOKALIKE[ch])
        elif how == "fullwidth" and "!" <= ch <= "~":
            out.append(chr(ord(ch) + 0xFEE0))
        elif how == "invisible":
            out.append(ch + draw(st.sampled_from(_INVISIBLE)))
        elif how == "case":
            out.append(ch.swapcase())
        else:
            out.append(ch)
    return text, "".join(out)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(disguised())
def test_disguises_do_not_hide_an_attack(case: tuple[str, str]) -> None:
    original, disguise = case
    assert skeleton(disguise) == skeleton(original)
    assert judge(disguise).flagged, disguise


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(disguised(_ENCODED, _HOW[:-1]))
def test_disguises_do_not_hide_an_encoded_attack(case: tuple[str, str]) -> None:
    assert len(_ENCODED) >= 15
    assert judge(case[1]).flagged, case[1]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_any_text_is_judged_without_error(text: str) -> None:
    verdict = judge(text)
    assert verdict.flagged == bool(verdict.acts)
    assert isinstance(skeleton(text), str)
