"""Secrets split across a thread's user messages, found by joining the messages.

"my password is" in one turn and the value in the next; an AWS secret key sent in two halves; a
key in three pieces.

Each message alone holds nothing the rules know, so each passes the filter. `split_secrets`
joins a thread's recent user messages two ways and runs the rules on the joins:

- the messages one after another, a line break between them, so a phrase in one and its value
  in the next read as one statement ("my password is" / "Tr0ub4dor&3", "card 4111 1111" /
  "1111 1111");
- token-like fragments of consecutive messages glued together (two and three at a time), so
  the halves of a key read as the key.

What a join reveals is reported per message as spans of that message's text, to be redacted
wherever the message is kept. The work is bounded: the last `WINDOW` messages, at most
`MAX_JOIN_CHARS` of each (its head and tail), and `MAX_FRAGMENTS` fragments per message.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import product

from memory.gating.privacy.filter import PrivacyFilter, placeholder

WINDOW = 4
"""How many of a thread's latest user messages are joined."""
MAX_JOIN_CHARS = 2_000
"""Characters of one message that take part in a join: its first and last thousand."""
MAX_FRAGMENTS = 3
"""Token-like fragments per message glued to their neighbours' (the last ones)."""
MAX_FRAGMENT_CHARS = 128
"""Longest fragment glued: a piece of a key, not a pasted blob (64,000 characters cost 0.5 s)."""

# A run of key characters long enough to be part of a key; one start per run.
FRAGMENT = re.compile(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/=_\-]{6,}")

Span = tuple[int, int, str]


def _looks_like_key_material(run: str) -> bool:
    # A word ("because", "Password") is not half a key; a run with digits, symbols or case
    # changes after its first letter may be.
    return (
        any(c.isdigit() for c in run)
        or any(c in "+/=_-" for c in run)
        or any(c.isupper() for c in run[1:])
    )


def _part(text: str) -> tuple[str, int]:
    """The part of `text` that is joined (all of it, or head + tail) and where the tail starts."""
    if len(text) <= MAX_JOIN_CHARS:
        return text, 0
    half = MAX_JOIN_CHARS // 2
    return text[:half] + "\n" + text[-half:], len(text) - half - (half + 1)


def _phrase_spans(texts: Sequence[str], privacy: PrivacyFilter) -> list[list[Span]]:
    """Spans found in the messages joined by line breaks that no message shows alone."""
    parts = [_part(t) for t in texts]
    # A line break between messages, not a space: a value read to the end of its clause (a
    # passphrase) ends with its message instead of taking the next one's first words.
    joined = "\n".join(p for p, _ in parts)
    bases, at = [], 0
    for part, _ in parts:
        bases.append(at)
        at += len(part) + 1
    alone = [privacy.spans(part) for part, _ in parts]
    out: list[list[Span]] = [[] for _ in texts]
    for start, end, kind in privacy.spans(joined):
        for i, (part, shift) in enumerate(parts):
            s, e = max(start, bases[i]) - bases[i], min(end, bases[i] + len(part)) - bases[i]
            if s >= e or any(a <= s and e <= b for a, b, _ in alone[i]):
                continue  # not in this message, or its own filter finds it anyway
            if shift and s > MAX_JOIN_CHARS // 2:  # in the tail: back to the text's positions
                s, e = s + shift, e + shift
            out[i].append((s, e, kind))
    return out


def _fragments(text: str) -> list[tuple[int, int]]:
    runs = [m for m in FRAGMENT.finditer(text) if m.end() - m.start() <= MAX_FRAGMENT_CHARS]
    if len(runs) == 1 and runs[0].group() == text.strip():
        return [runs[0].span()]  # a message that is one run is a piece whatever it looks like
    found = [m.span() for m in runs if _looks_like_key_material(m.group())]
    return found[-MAX_FRAGMENTS:]


def _glued_spans(texts: Sequence[str], privacy: PrivacyFilter) -> list[list[Span]]:
    """Fragments of consecutive messages that, glued together, are a key."""
    frags = [_fragments(t) for t in texts]
    out: list[list[Span]] = [[] for _ in texts]
    for size in (2, 3):
        for first in range(len(texts) - size + 1):
            chosen = range(first, first + size)
            for combo in product(*(frags[i] for i in chosen)):
                pieces = [texts[i][s:e] for i, (s, e) in zip(chosen, combo, strict=True)]
                glued = "".join(pieces)
                bounds, at = [], 0
                for piece in pieces:
                    bounds.append((at, at + len(piece)))
                    at += len(piece)
                for start, end, kind in privacy.spans(glued):
                    touched = [k for k, (a, b) in enumerate(bounds) if a < end and start < b]
                    if len(touched) < 2:
                        continue
                    for k in touched:
                        out[first + k].append((*combo[k], kind))
    return out


def split_secrets(texts: Sequence[str], privacy: PrivacyFilter | None = None) -> list[list[Span]]:
    """Per message of `texts`, the spans to redact because with its neighbours it holds a secret.

    `texts` are a thread's user messages, oldest first; empty lists when nothing is split.
    Only the last `WINDOW` messages are joined; earlier ones get empty lists.
    """
    privacy = privacy or PrivacyFilter()
    out: list[list[Span]] = [[] for _ in texts]
    start = max(0, len(texts) - WINDOW)
    recent = list(texts[start:])
    if len(recent) < 2:
        return out
    for found in (_phrase_spans(recent, privacy), _glued_spans(recent, privacy)):
        for i, spans in enumerate(found):
            out[start + i].extend(spans)
    return [sorted(set(spans)) for spans in out]


def without_split_secrets(texts: Sequence[str], privacy: PrivacyFilter | None = None) -> list[str]:
    """`texts` (one user's messages of a history, oldest first) with every split secret redacted.

    For a whole history at once (an import): windows of `WINDOW` messages, each starting two
    after the last, so every two and three consecutive messages are joined in one of them (a
    thread joins each new turn with the three before it: four times the work); each piece a
    join reveals is replaced by the placeholder of its kind.
    """
    privacy = privacy or PrivacyFilter()
    spans: list[set[Span]] = [set() for _ in texts]
    for start in range(0, max(len(texts) - 1, 0), max(WINDOW - 2, 1)):
        window = texts[start : start + WINDOW]
        for i, found in enumerate(split_secrets(window, privacy)):
            spans[start + i].update(found)
    return [_replaced(text, sorted(found)) for text, found in zip(texts, spans, strict=True)]


def _replaced(text: str, spans: Sequence[Span]) -> str:
    out, at = [], 0
    for start, end, kind in spans:
        if end <= at:
            continue  # inside a span already replaced
        start = max(start, at)
        out += [text[at:start], placeholder(kind)]
        at = end
    return "".join(out) + text[at:] if out else text


__all__ = [
    "MAX_FRAGMENTS",
    "MAX_FRAGMENT_CHARS",
    "MAX_JOIN_CHARS",
    "WINDOW",
    "split_secrets",
    "without_split_secrets",
]
