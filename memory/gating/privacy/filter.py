"""Redact secrets and personal data before anything is stored, embedded, indexed or logged.

Card numbers, SSNs, passwords, API keys and personal data are replaced by placeholders such as
`[REDACTED:card]`; content that must not be kept even redacted (a card number with its expiry
or security code, a private key block) is flagged `high_risk` and the gate refuses to store it.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from memory.gating.privacy.disguise import reading
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
    First, when part of the text is disguised (encoded, spelled out, split by invisible
    characters), the rules run on the text as meant (`disguise.reading`) and each finding's
    original span is redacted; then they run on what is left, as written.
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
        meant = reading(text)
        if meant is not None:
            found = [(*meant.origin(s, e), kind) for s, e, kind in self.spans(meant.text)]
            redacted = _replace(text, found, findings)
        for rule in self._rules:
            redacted = _apply(rule, redacted, findings)
        kinds = {f.kind for f in findings}
        context = text if meant is None else f"{text}\n{meant.text}"
        high_risk = bool(kinds & _ALWAYS_HIGH_RISK) or (
            "card" in kinds and CARD_RISK_CONTEXT.search(context) is not None
        )
        return Redaction(redacted, findings, high_risk)

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """Where the rules find secrets in `text`: (start, end, kind) spans of `text`, sorted.

        The same rules in the same order as `redact`, each on the text as the earlier ones left
        it (placeholders in place), so the two agree; a later match over an earlier placeholder
        covers what that placeholder replaced. Used on text that is not stored as it is (a
        disguise read as meant, a thread's messages joined) to find what to redact in the text
        that is.
        """
        segments: list[_Segment] = [(0, len(text), None)]
        current = text
        for rule in self._rules:
            hits = list(_matches(rule, current))
            if hits:
                segments = _cover(segments, hits, rule.kind)
                current = "".join(
                    text[s:e] if k is None else placeholder(k) for s, e, k in segments
                )
        return [(s, e, k) for s, e, k in segments if k is not None]

    def clean(self, text: str) -> str:
        """Just the redacted text (for logs and prompts)."""
        return self.redact(text).text


# A stretch of text in `PrivacyFilter.spans`: (start, end, None) kept as written, or
# (start, end, kind) replaced by a placeholder.
_Segment = tuple[int, int, str | None]


def _matches(rule: Rule, text: str) -> Iterator[tuple[int, int]]:
    """The spans of `text` that `rule` redacts: its group, where the validator agrees."""
    held = [m.span() for m in _PRIOR.finditer(text)] if "[REDACTED:" in text else []
    for match in rule.pattern.finditer(text):
        start, end = match.span(rule.group)
        if held:
            start, end = _outside_placeholders(start, end, held)
        if start < 0 or start >= end:  # an operator's pattern may match empty text: nothing
            continue
        if rule.validate is not None and not rule.validate(match.group(rule.group)):
            continue
        yield start, end


def _outside_placeholders(start: int, end: int, held: list[tuple[int, int]]) -> tuple[int, int]:
    """A match's span moved off the inside of earlier placeholders (sorted, disjoint spans).

    A looser rule can read a placeholder's own letters as a value ("user:[REDACTED:password]@"
    is still a URL with credentials); redacting them again nests placeholders. A span that
    starts inside one starts after it, and one that ends inside one ends after it. Bisection
    keeps a text with many placeholders and many matches linear-logarithmic.
    """
    for at in (start, end):
        i = bisect_right(held, (at, -1)) - 1
        if i >= 0 and held[i][0] < at < held[i][1]:
            if at == start:
                start = held[i][1]
            else:
                end = held[i][1]
    return start, end


def _cover(segments: list[_Segment], hits: list[tuple[int, int]], kind: str) -> list[_Segment]:
    """`segments` with the stretches under `hits` (spans of the current text) made `kind`."""
    starts, pos = [], 0
    for s, e, k in segments:
        starts.append(pos)
        pos += (e - s) if k is None else len(placeholder(k))

    def origin(at: int, end: bool) -> int:
        i = bisect_right(starts, at - end) - 1
        s, e, k = segments[i]
        if k is None:
            return s + at - starts[i]
        return e if end else s  # a match touching a placeholder covers all it replaced

    covers: list[_Segment] = [(origin(a, False), origin(b, True), kind) for a, b in hits]
    out: list[_Segment] = []
    j = 0
    for s, e, k in segments:
        while j < len(covers) and covers[j][1] <= s:
            j += 1
        if k is not None:
            if not (j < len(covers) and covers[j][0] <= s and e <= covers[j][1]):
                out.append((s, e, k))
            continue
        at, n = s, j
        while n < len(covers) and covers[n][0] < e:
            if covers[n][0] > at:
                out.append((at, covers[n][0], None))
            at = max(at, covers[n][1])
            n += 1
        if at < e:
            out.append((at, e, None))
    return sorted(out + covers)


def _replace(text: str, spans: list[tuple[int, int, str]], findings: list[Finding]) -> str:
    """`text` with each span (merged where they overlap) replaced by its kind's placeholder."""
    out: list[str] = []
    last = 0
    for start, end, kind in sorted(spans):
        if end <= last:
            continue
        start = max(start, last)
        out += [text[last:start], placeholder(kind)]
        findings.append(Finding(kind, placeholder(kind)))
        last = end
    out.append(text[last:])
    return "".join(out)


def _apply(rule: Rule, text: str, findings: list[Finding]) -> str:
    """Redact every validated match of `rule` in `text`, appending to `findings`."""
    out: list[str] = []
    last = 0
    for start, end in _matches(rule, text):
        out.append(text[last:start])
        out.append(placeholder(rule.kind))
        findings.append(Finding(rule.kind, placeholder(rule.kind)))
        last = end
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)
