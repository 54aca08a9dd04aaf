"""Redact secrets and personal data before anything is stored, embedded, indexed or logged.

Card numbers, SSNs, passwords, API keys and personal data are replaced by placeholders such as
`[REDACTED:card]`; content that must not be kept even redacted (a card number with its expiry
or security code, a private key block) is flagged `high_risk` and the gate refuses to store it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from memory.gating.privacy.patterns import CARD_RISK_CONTEXT, EMAIL, PHONES, RULES, Rule

# Kinds whose presence alone makes a text unfit to keep, redacted or not.
_ALWAYS_HIGH_RISK = frozenset({"private_key"})


@dataclass(frozen=True, slots=True)
class Finding:
    """One redacted span: its kind and the placeholder that replaced it."""

    kind: str
    placeholder: str


@dataclass(frozen=True, slots=True)
class Redaction:
    """The redacted text, what was removed, and whether the text must not be stored at all."""

    text: str
    findings: list[Finding] = field(default_factory=list)
    high_risk: bool = False

    @property
    def kinds(self) -> tuple[str, ...]:
        """The distinct kinds redacted, in order of first appearance."""
        return tuple(dict.fromkeys(f.kind for f in self.findings))


def placeholder(kind: str) -> str:
    """The text that replaces a secret of `kind`."""
    return f"[REDACTED:{kind}]"


_PRIOR = re.compile(r"\[REDACTED:([a-z_]+)\]")


class PrivacyFilter:
    """Applies the secret rules, then (optionally) email and phone rules, then extra patterns.

    Rules run in priority order on the progressively redacted text: placeholders contain no
    digits, so a later, looser rule (phone numbers) cannot re-match what an earlier one removed.
    """

    def __init__(
        self,
        extra_patterns: Sequence[str] = (),
        *,
        redact_emails: bool = True,
        redact_phones: bool = True,
    ) -> None:
        custom = tuple(Rule("custom", re.compile(p)) for p in extra_patterns if p.strip())
        contact: list[Rule] = []
        if redact_emails:
            contact.append(EMAIL)
        if redact_phones:
            contact.extend(PHONES)
        # User patterns first: they name things the built-ins might split differently.
        self._rules: tuple[Rule, ...] = (*custom, *RULES, *contact)

    def redact(self, text: str) -> Redaction:
        """Replace every secret in `text` with a placeholder and report what was found."""
        # Text redacted earlier (at the server's door, before the run was recorded) arrives with
        # placeholders: they count as findings, so such text is judged as the raw text would be
        # (a private key stays high-risk after its placeholder replaced it).
        findings = [Finding(m.group(1), m.group(0)) for m in _PRIOR.finditer(text)]
        redacted = text
        for rule in self._rules:
            redacted = _apply(rule, redacted, findings)
        kinds = {f.kind for f in findings}
        high_risk = bool(kinds & _ALWAYS_HIGH_RISK) or (
            "card" in kinds and CARD_RISK_CONTEXT.search(text) is not None
        )
        return Redaction(redacted, findings, high_risk)

    def clean(self, text: str) -> str:
        """Just the redacted text (for logs and prompts)."""
        return self.redact(text).text


def _apply(rule: Rule, text: str, findings: list[Finding]) -> str:
    """Redact every validated match of `rule` in `text`, appending to `findings`."""
    out: list[str] = []
    last = 0
    for match in rule.pattern.finditer(text):
        start, end = match.span(rule.group)
        if start < 0:
            continue
        value = match.group(rule.group)
        if rule.validate is not None and not rule.validate(value):
            continue
        out.append(text[last:start])
        out.append(placeholder(rule.kind))
        findings.append(Finding(rule.kind, placeholder(rule.kind)))
        last = end
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)
