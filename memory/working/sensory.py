"""Sensory memory: clean the raw input and extract its features.

Lives for one step. Nothing here is stored except the features (the hash makes a turn
traceable in debug logs without keeping its text).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from typing import Literal

from typing_extensions import TypedDict

from memory.working.tokens import count_tokens
from memory.working.turn_kind import classify_turn, is_question

__all__ = [
    "DEFAULT_MAX_CHARS",
    "InputError",
    "Language",
    "SensoryFeatures",
    "classify_turn",
    "extract_features",
    "has_visible_text",
    "normalise_input",
]

# 64,000 characters is ~16k tokens of English: beyond that an input is a document, not a turn.
DEFAULT_MAX_CHARS = 64_000

Language = Literal["zh", "en", "mixed"]

# C0 controls except \t and \n, DEL, C1 controls, BOM, bidi overrides/isolates (they can hide
# text from a reviewer while the model still reads it). ZWJ/ZWNJ stay: emoji and scripts use them.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufeff\u202a-\u202e\u2066-\u2069]")
# Characters that show nothing: format characters (zero-width space/joiners, word joiner, ...),
# combining marks with no base, and the blank "filler" letters some scripts define.
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp", "Mn", "Me"})
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*\n)+")
_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
_URL = re.compile(r"\bhttps?://\S+|\bwww\.\w[\w.-]*\.\w{2,}", re.IGNORECASE)
# Every alternative runs in linear time on any input: indentation is spaces and tabs (a `\s`
# lead would swallow the following lines from every line start), a call is matched from the
# start of a word with at most one level of nested parentheses (`\w+\(.*\)` retried from every
# character was quadratic: 20 s for a 64,000-character message).
_CODE = re.compile(
    r"```|^[ \t]{4,}\S|^[ \t]*(def|class|import|from \S+ import|function|const|let|var|public|"
    r"#include|package|fn|func|SELECT|INSERT|UPDATE|CREATE TABLE)\b|[{};][ \t]*$|=>"
    r"|\b\w+\((?:[^()\n]|\([^()\n]*\))*\)[ \t]*[:{]",
    re.MULTILINE,
)


class InputError(ValueError):
    """The raw input cannot be used as a turn (empty, too long, or not text)."""

    def __init__(self, reason: Literal["empty", "too_long", "not_text"], message: str) -> None:
        super().__init__(message)
        self.reason = reason


class SensoryFeatures(TypedDict):
    """Features of one input (plain data: goes into graph state)."""

    length: int
    tokens: int
    has_code: bool
    language: Language
    sha256: str
    has_url: bool
    is_question: bool


def _to_text(raw: str | bytes) -> str:
    if isinstance(raw, bytes | bytearray):
        return bytes(raw).decode("utf-8", errors="replace")
    if not isinstance(raw, str):
        raise InputError("not_text", f"input must be str or bytes, got {type(raw).__name__}")
    if _SURROGATE.search(raw):
        # A UTF-16 round trip joins valid surrogate pairs and turns lone ones into U+FFFD.
        return raw.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return raw


def normalise_input(
    raw: str | bytes,
    max_chars: int = DEFAULT_MAX_CHARS,
    on_overflow: Literal["truncate", "reject"] = "truncate",
) -> str:
    """Clean a raw user input into safe text, or raise `InputError`.

    Decodes bytes as UTF-8 (invalid bytes become U+FFFD), repairs lone surrogates, applies NFC,
    turns CR/CRLF into LF, strips control characters other than newline and tab, and trims
    blank lines around the text. Input longer than `max_chars` after cleaning is cut to its first
    `max_chars` characters (`on_overflow="truncate"`) or rejected (`"reject"`).
    """
    text = unicodedata.normalize("NFC", _to_text(raw))
    text = _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = _LEADING_BLANK_LINES.sub("", text).rstrip()
    if not has_visible_text(text):
        raise InputError(
            "empty", "input is empty or only whitespace, zero-width or control characters"
        )
    if len(text) > max_chars:
        if on_overflow == "reject":
            raise InputError(
                "too_long", f"input is {len(text):,} characters; the limit is {max_chars:,}"
            )
        text = text[:max_chars].rstrip()
    return text


def has_visible_text(text: str) -> bool:
    """True when `text` shows at least one character (not only blanks, zero-width, marks)."""
    return any(
        ch not in _BLANK_LETTERS and unicodedata.category(ch) not in _INVISIBLE_CATEGORIES
        for ch in text
    )


def detect_language(text: str) -> Language:
    """The language hint: zh, en (any non-CJK text) or mixed; a Latin word weighs 2 CJK chars."""
    cjk = len(_CJK_CHAR.findall(text))
    if cjk == 0:
        return "en"
    latin = 2 * len(_LATIN_WORD.findall(text))
    share = cjk / (cjk + latin)
    if share >= 0.7:
        return "zh"
    return "mixed" if share >= 0.2 else "en"


def extract_features(text: str) -> SensoryFeatures:
    """Length, tokens, code, language, hash, URL and question features of a cleaned input."""
    return SensoryFeatures(
        length=len(text),
        tokens=count_tokens(text),
        has_code=bool(_CODE.search(text)),
        language=detect_language(text),
        sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        has_url=bool(_URL.search(text)),
        is_question=is_question(text),
    )
