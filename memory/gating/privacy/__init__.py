"""Redact secrets and personal data before anything is stored, embedded, indexed or logged.

`filter.PrivacyFilter` applies the `patterns` to one text; `deep.StructureRedactor` applies it to
every string inside a nested value (run input, graph state, checkpoints). `StructureRedactor` is
loaded on first use: it needs `langchain_core`, which the text filter alone does not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.exports import lazy_exports
from memory.gating.privacy.filter import (
    Finding,
    PrivacyFilter,
    Redaction,
    placeholder,
)
from memory.gating.privacy.patterns import cn_id_ok, iban_ok, luhn_ok

if TYPE_CHECKING:
    from memory.gating.privacy.deep import StructureRedactor


__getattr__ = lazy_exports(__name__, {"StructureRedactor": ".deep"})


__all__ = [
    "Finding",
    "PrivacyFilter",
    "Redaction",
    "StructureRedactor",
    "cn_id_ok",
    "iban_ok",
    "luhn_ok",
    "placeholder",
]
