"""See through disguises: read a text the way its writer meant it before the rules match.

A secret sent base64, base64url, hex (also as spaced bytes, with '0x', or as backslash-x
escapes), percent-encoded, as character escapes (JSON/JS backslash-u, HTML '&#115;'), spelled
out one character at a time ("s k - l i v e ...", "A-K-I-A-..."), in full-width letters, or
with invisible characters inside (zero-width space, soft hyphen, bidi controls, variation
selectors, word joiner) matches no rule as written.
`reading(text)` builds a `Reading`: the text with what each such run says after it, and, for
every character of that reading, the span of the original it came from. The filter matches
the rules on the reading and redacts the original span of each finding, so an encoded run is
replaced whole and the text around it is kept as written.

The work is bounded, so the cost stays linear in the text: at most `MAX_RUNS` runs per text are
decoded, an encoded run longer than `MAX_ENCODED_CHARS` is not decoded (an inline image, say),
and a decoded run is read again for a nested disguise at most `MAX_DEPTH` times. Every pattern
is module-level (the linear-time audit times it) and has no nested quantifier over overlapping
classes.
"""

from __future__ import annotations

import base64
import binascii
import re
import urllib.parse
from collections import Counter
from dataclasses import dataclass

MAX_RUNS = 64
"""Disguised runs decoded per text; the rest are left to the rules as written."""
MAX_ENCODED_CHARS = 4096
"""Longest encoded run decoded: a private key in base64 fits, an inline photo does not."""
MAX_SPELLED_CHARS = 200
"""Longest spelled-out run read (in characters read, not typed): keys are under 200."""
MAX_DEPTH = 2
"""How many disguises deep a run is read (hex inside base64, say)."""

# Format and other invisible characters that render as nothing inside a word: zero-width
# space/joiners, soft hyphen, combining grapheme joiner, Arabic letter mark, Hangul fillers,
# Mongolian and ordinary variation selectors, LRM/RLM, bidi embeddings, overrides and isolates,
# word joiner and invisible operators, BOM, and the tag characters.
_INVISIBLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f\U000e0100-\U000e01ef"
)
INVISIBLE_RUN = re.compile(f"[{_INVISIBLE}]+")
# A base64 / base64url / hex run: one start per run (the look-behind), so a run that fails
# costs its length once.
ENCODED_RUN = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/_=-])")
# A run with at least two %XX escapes; '%' is outside the literal class, so the split between
# escapes and literals is unambiguous.
PERCENT_RUN = re.compile(r"(?<![\w%.~+-])[\w.~+-]*(?:%[0-9A-Fa-f]{2}[\w.~+-]*){2,}", re.ASCII)
# Eight or more single characters, each followed by one to seven separators (space, dot,
# dash, comma). The character class and the separator class are disjoint: one way to parse.
SPELLED_RUN = re.compile(
    r"(?<![A-Za-z0-9])[A-Za-z0-9_+/=!@#$%^&*]"
    r"(?:[ .,\-]{1,7}[A-Za-z0-9_+/=!@#$%^&*]){7,}(?![A-Za-z0-9])"
)
_SPELLED_SEPARATOR = re.compile(r"[ .,\-]{1,7}")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2})+")
# Hex bytes one at a time: "73 6b 2d 6c", "73:6b:2d:6c", "\x73\x6b\x2d\x6c" (six or four at
# least). Separators and digits are disjoint classes.
HEX_BYTES_RUN = re.compile(
    r"(?<![0-9A-Za-z])[0-9A-Fa-f]{2}(?:[ :\-][0-9A-Fa-f]{2}){5,}(?![0-9A-Za-z])"
)
HEX_ESCAPES_RUN = re.compile(r"(?:\\x[0-9A-Fa-f]{2}){4,}")
# Character escapes as JSON, JavaScript, Python, Java and C# write them ("\\u0073", "\\u{73}",
# "\\U00000073", and "\\x73" between them) and HTML numeric character references ("&#115;",
# "&#x73;"): four or more, with at most 16 literal characters between two of them (a JSON encoder
# escapes only some characters) and the token characters around them (a key half escaped reads
# whole). A literal is never a backslash or an ampersand, the only characters an escape starts
# with, so there is one way to parse a run; the 64 before it cost at most 64 steps a start.
_CHAR_ESCAPE = (
    r"(?:\\u[0-9A-Fa-f]{4}|\\u\{[0-9A-Fa-f]{1,6}\}|\\U[0-9A-Fa-f]{8}|\\x[0-9A-Fa-f]{2}"
    r"|&#[0-9]{1,7};|&#[xX][0-9A-Fa-f]{1,6};)"
)
_TOKEN_CHARS = r"[A-Za-z0-9_+/=.-]{0,64}"
CHAR_ESCAPES_RUN = re.compile(
    rf"{_TOKEN_CHARS}{_CHAR_ESCAPE}(?:[^\s\\&]{{0,16}}{_CHAR_ESCAPE}){{3,}}{_TOKEN_CHARS}"
)
_ONE_ESCAPE = re.compile(_CHAR_ESCAPE)
# Full-width letters and digits ("ｓｋ－ｌｉｖｅ"): read as their ASCII forms, one for one.
FULLWIDTH_ALNUM = re.compile(r"[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]")
_HALFWIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}
_HEX_SEPARATORS = str.maketrans("", "", " :-\\x")


@dataclass(frozen=True, slots=True)
class Reading:
    """A text as its writer meant it, with each character's origin in the text as written.

    `lo[i]`/`hi[i]` are the start and end, in the original, of what reading character `i` came
    from: one character for text kept as written, the whole run for a decoded one.
    """

    text: str
    lo: list[int]
    hi: list[int]

    def origin(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original that the reading's `[start, end)` came from."""
        return self.lo[start], self.hi[end - 1]


def _printable(text: str) -> bool:
    # Decoded bytes count as text only if they read as text: a photo or a hash decodes to
    # control characters and invalid UTF-8, which are left alone.
    return len(text) >= 4 and all(c.isprintable() or c in "\n\t " for c in text)


def _decode_bytes(data: bytes) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    text = INVISIBLE_RUN.sub("", text)  # a disguise inside a disguise
    return text if _printable(text) else None


def _decode_hex_bytes(run: str) -> str | None:
    """Hex bytes spaced ('73 6b 2d') or escaped (backslash-x each): what they say, if text."""
    if len(run) > MAX_ENCODED_CHARS:
        return None
    return _decode_bytes(bytes.fromhex(run.translate(_HEX_SEPARATORS)))


def _decode_encoded(run: str) -> str | None:
    """What a base64, base64url or hex run ('0x' or not) says, if it says text."""
    if len(run) > MAX_ENCODED_CHARS or run.isdigit():
        return None  # digits alone are a number (a card, an account), not an encoding
    if run[:2] in ("0x", "0X") and _HEX.fullmatch(run, 2):
        return _decode_bytes(bytes.fromhex(run[2:]))
    if _HEX.fullmatch(run):
        text = _decode_bytes(bytes.fromhex(run))
        if text is not None:
            return text
    body = run.rstrip("=")
    if len(body) % 4 == 1:
        return None
    padded = body + "=" * (-len(body) % 4)
    for decode in (base64.b64decode, base64.urlsafe_b64decode):
        try:
            text = _decode_bytes(decode(padded))
        except (binascii.Error, ValueError):
            continue
        if text is not None:
            return text
    return None


def _unescape(escape: re.Match[str]) -> str:
    body = escape.group()
    if body.startswith("&#"):
        digits = body[2:-1]
        code = int(digits[1:], 16) if digits[:1] in "xX" else int(digits)
    else:
        code = int(body[2:].strip("{}"), 16)
    # Out of Unicode's range: a character no writer meant, kept out (the run is then not text).
    return chr(code) if code <= 0x10FFFF else "\ufffe"


def _decode_char_escapes(run: str) -> str | None:
    r"""What a run of character escapes says ('\u0073\u006b', '&#115;&#107;'), if text."""
    if len(run) > MAX_ENCODED_CHARS:
        return None
    text = _ONE_ESCAPE.sub(_unescape, run)
    try:  # an astral character escaped as a UTF-16 surrogate pair ("\\ud83d\\ude00")
        text = text.encode("utf-16", "surrogatepass").decode("utf-16")
    except UnicodeError:
        return None
    text = INVISIBLE_RUN.sub("", text)
    return text if _printable(text) else None


def _decode_percent(run: str) -> str | None:
    if len(run) > MAX_ENCODED_CHARS:
        return None
    try:
        text = urllib.parse.unquote(run, errors="strict")
    except UnicodeDecodeError:  # escapes that are not UTF-8 ("%FF%FE"): not text
        return None
    text = INVISIBLE_RUN.sub("", text)
    return text if text != run and _printable(text) else None


def _decode_spelled(run: str) -> str | None:
    """'s k - l i v e' -> 'sk-live'; 'A-K-I-A' -> 'AKIA'; None when too long to be a key."""
    gaps = list(_SPELLED_SEPARATOR.finditer(run))
    # The separator is the one used most; a character between two of them ("s k - l",
    # "s.k.-.l", "s-k---l") is part of the secret.
    sep = Counter(g.group() for g in gaps).most_common(1)[0][0]
    out: list[str] = []
    last = 0
    for gap in gaps:
        out.append(run[last : gap.start()])
        text = gap.group()
        if len(text) == 2 * len(sep) + 1 and text.startswith(sep) and text.endswith(sep):
            out.append(text[len(sep)])
        last = gap.end()
    out.append(run[last:])
    text = "".join(out)
    return text if len(text) <= MAX_SPELLED_CHARS else None


def _may_escape(text: str) -> bool:
    return "\\u" in text or "\\U" in text or "&#" in text


_DECODERS = (
    (CHAR_ESCAPES_RUN, _decode_char_escapes),
    (HEX_ESCAPES_RUN, _decode_hex_bytes),
    (HEX_BYTES_RUN, _decode_hex_bytes),
    (PERCENT_RUN, _decode_percent),
    (ENCODED_RUN, _decode_encoded),
    (SPELLED_RUN, _decode_spelled),
)


def _runs(text: str) -> list[tuple[int, int, str]]:
    """Disguised runs of `text` and what each says: (start, end, decoded), sorted, disjoint."""
    found: list[tuple[int, int, str]] = []
    taken: list[tuple[int, int]] = []
    for pattern, decode in _DECODERS:
        if pattern is CHAR_ESCAPES_RUN and not _may_escape(text):
            continue  # its token prefix costs up to 64 steps a character: only where it can hit
        for match in pattern.finditer(text):
            if len(found) >= MAX_RUNS:
                break
            start, end = match.span()
            if any(s < end and start < e for s, e in taken):
                continue
            decoded = decode(match.group())
            if decoded is not None:
                found.append((start, end, decoded))
                taken.append((start, end))
    found.sort()
    return found


def reveal(text: str, depth: int = MAX_DEPTH) -> str:
    """`text` with its invisible characters removed and disguised runs decoded, nested too."""
    text = INVISIBLE_RUN.sub("", text).translate(_HALFWIDTH)
    if depth <= 0:
        return text
    out: list[str] = []
    last = 0
    for _, end, decoded in _runs(text):
        # Decoded text sits apart from its neighbours, as the encoded run did; the run stays
        # too, since it may mean itself (the digits of a spelled-out card also read as hex).
        out += [text[last:end], " ", reveal(decoded, depth - 1), " "]
        last = end
    out.append(text[last:])
    return "".join(out)


def reading(text: str) -> Reading | None:
    """`text` as meant, with origins; None when nothing in it is disguised (the common case)."""
    invisible = [m.span() for m in INVISIBLE_RUN.finditer(text)]
    # Text kept as written, with the original index of each of its characters.
    plain, index = text, None
    if invisible:
        ends = [0] + [e for _, e in invisible]
        kept = list(zip(ends, [s for s, _ in invisible] + [len(text)], strict=True))
        plain = "".join(text[s:e] for s, e in kept)
        index = [i for s, e in kept for i in range(s, e)]
    fullwidth = FULLWIDTH_ALNUM.search(plain) is not None
    if fullwidth:  # one for one: the positions stay
        plain = plain.translate(_HALFWIDTH)
    runs = _runs(plain)
    if not runs and not invisible and not fullwidth:
        return None
    pieces: list[str] = []
    lo: list[int] = []
    hi: list[int] = []

    def keep(start: int, end: int) -> None:
        pieces.append(plain[start:end])
        if index is None:
            lo.extend(range(start, end))
            hi.extend(range(start + 1, end + 1))
        else:
            lo.extend(index[start:end])
            hi.extend(i + 1 for i in index[start:end])

    last = 0
    for start, end, decoded in runs:
        keep(last, end)  # the run as written too: it may mean itself
        said = " " + reveal(decoded, MAX_DEPTH - 1) + " "
        first = start if index is None else index[start]
        stop = end if index is None else index[end - 1] + 1
        pieces.append(said)
        lo.extend([first] * len(said))
        hi.extend([stop] * len(said))
        last = end
    keep(last, len(plain))
    return Reading("".join(pieces), lo, hi)


__all__ = [
    "CHAR_ESCAPES_RUN",
    "INVISIBLE_RUN",
    "MAX_DEPTH",
    "MAX_ENCODED_CHARS",
    "MAX_RUNS",
    "MAX_SPELLED_CHARS",
    "Reading",
    "reading",
    "reveal",
]
