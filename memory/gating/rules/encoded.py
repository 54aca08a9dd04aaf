"""Text hidden in an encoding: base64, hex and percent-encoded runs decoded for the screen.

An instruction sent as `RnJvbSBub3cgb24s…` or `66726f6d206e6f77…` reads as noise to a pattern
and as an instruction to a model that decodes it. `decoded_texts` finds runs of plausible
length, decodes each, and keeps those that decode to readable UTF-8 text, so the poisoning
screen can judge what the run says. Bounded by the work, not by a count of runs (eight harmless runs
in front must not hide a ninth): at most MAX_DECODED_CHARS of runs are decoded per level, two
levels deep, so the cost stays linear in the text.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
import urllib.parse

__all__ = ["MAX_DECODED_CHARS", "MAX_DEPTH", "MAX_RUN_CHARS", "decoded_texts"]

# Characters of runs decoded per level: a stored memory is at most 20,000 characters and a
# turn 64,000, so every run of any text the screen sees fits.
MAX_DECODED_CHARS = 65_536
MAX_RUN_CHARS = 8_192  # a longer run is cut: 6 KB of decoded text is plenty to judge
_HEX_TRIES = 4  # alignments tried per hex run
MAX_DEPTH = 2  # base64 of base64, and no deeper
_MIN_RUN = 16  # shorter runs are words, ids and hashes more often than payloads

# Runs start where no run character precedes them, so a failed match is not retried inside
# the run: linear in the text. URL-safe base64 letters are accepted too.
_B64 = re.compile(r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{16,}={0,2}")
# Possessive: a run is taken whole once, never re-split from each of its pairs.
_HEX = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}[ :]?+){8,}+")
_ESCAPED_HEX = re.compile(r"(?:\\x[0-9A-Fa-f]{2}){8,}")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_HEX_SEP = re.compile(r"[ :]")
_NOT_HEX = re.compile(r"[^0-9A-Fa-f]")


def _readable(data: bytes) -> str | None:
    """The bytes as text when they are UTF-8 and mostly letters, digits, spaces and marks."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(text) < 4:
        return None
    printable = sum(1 for ch in text if ch.isprintable() or ch in "\n\t")
    # Letters or digits: a decoded run may be another encoding (hex inside base64).
    words = sum(1 for ch in text if ch.isalnum())
    if printable < 0.95 * len(text) or words < 0.5 * len(text.replace(" ", "")):
        return None
    return text


def _b64(run: str) -> str | None:
    body = run.rstrip("=").replace("-", "+").replace("_", "/")
    body = body[: len(body) - len(body) % 4] if len(body) % 4 == 1 else body
    try:
        data = base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    return _readable(data)


def _hex(run: str) -> str | None:
    # A run may begin with a word's hex-looking end ("face 44c3…"): the whole run, then the run
    # without its first piece, then each long piece, and each at both byte alignments.
    pieces = _HEX_SEP.split(run)
    tries = [run, " ".join(pieces[1:])] + [p for p in pieces if len(p) >= _MIN_RUN]
    for candidate in tries[:_HEX_TRIES]:
        digits = _NOT_HEX.sub("", candidate)
        for skip in (0, 1):
            body = digits[skip:]
            try:
                text = _readable(bytes.fromhex(body[: len(body) - len(body) % 2]))
            except ValueError:
                continue
            if text is not None:
                return text
    return None


def _once(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", text)  # full-width "ＲｎＪｖ…" is base64 too
    found: list[str] = []
    candidates = [(m.group(0)[:MAX_RUN_CHARS], _hex) for m in _HEX.finditer(text)]
    candidates += [
        (m.group(0).replace("\\x", "")[:MAX_RUN_CHARS], _hex) for m in _ESCAPED_HEX.finditer(text)
    ]
    candidates += [(m.group(0)[:MAX_RUN_CHARS], _b64) for m in _B64.finditer(text)]
    seen: set[str] = set()
    budget = MAX_DECODED_CHARS
    for run, decode in candidates:
        if run in seen or len(run) < _MIN_RUN:
            continue
        budget -= len(run)
        if budget < 0:
            break
        seen.add(run)
        decoded = decode(run)
        if decoded is not None:
            found.append(decoded)
    if len(_PERCENT.findall(text[: MAX_RUN_CHARS * 4])) >= 4:
        unquoted = urllib.parse.unquote(text[: MAX_RUN_CHARS * 4])
        if unquoted != text:
            found.append(unquoted)
    return found


def decoded_texts(text: str) -> list[str]:
    """What the encoded runs in `text` say (readable decodings only, nested up to MAX_DEPTH)."""
    out: list[str] = []
    layer = [text]
    for _ in range(MAX_DEPTH):
        layer = [d for t in layer for d in _once(t)]
        if not layer:
            break
        out += layer
    return out
