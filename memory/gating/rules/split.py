"""Split a turn into candidate statements (sentences) and those into clauses, English and Chinese.

A sentence ends at `.!?` followed by space, or at `。！？` or a newline. A period inside a
number, a version or a host name ("3.11", "example.internal") is not a boundary, nor is one
after a common abbreviation ("Dr.", "e.g.").
"""

from __future__ import annotations

import re

_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof st jr sr vs etc e.g i.e approx inc ltd co no fig jan feb mar apr jun "
    "jul aug sep sept oct nov dec mt ave".split()
)
# A semicolon joins two halves of one statement ("Tea is my morning drink; I don't like
# coffee."): it is a clause break, never a sentence end, so the statement is kept whole.
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+|(?<=[。！？])\s*|\n+")
_CLAUSE_BREAK = re.compile(
    # Commas inside numbers ("$2,000") and colons inside times or placeholders are not breaks.
    # A match starts only where a whitespace run starts: a bare `\s*` lead retries the run from
    # every position inside it, quadratic on a long run of spaces.
    r"(?<!\s)\s*(?:[，、：;；]|(?<!\d),|,(?!\d)|(?<!REDACTED):(?!\d)|\s[-–—]+\s|—|\(|\)"
    r"|\bbut\b|\bthough\b|\band then\b|不过|但是|可是)\s*"
    # Chinese puts no space between words: typed on a phone, a space between two Chinese
    # characters is the comma ("我花生过敏 推荐个零食吧").
    r"|(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])",
    re.IGNORECASE,
)
_PLACEHOLDER_SAFE = re.compile(r"\[REDACTED:[a-z_]+\]")
# A shared image arrives as its caption in brackets at the end of the turn: "[image: a dog on a
# beach]" (this project's benchmark), "[shares a photo of a dog]" (LoCoMo's own rendering).
_MEDIA = re.compile(
    r"(?<!\s)\s*\[(?:image|photo|picture|图片|照片|(?:shares?|shared|sends?|sent) (?:an? )?"
    r"(?:photo|image|picture|pic)(?: of)?)\s*[:：]?\s*(?P<caption>[^\[\]]*)\]\s*$",
    re.IGNORECASE,
)


def _last_word(piece: str) -> str:
    words = piece.rstrip(".").split()
    return words[-1].lower() if words else ""


def split_media(text: str) -> tuple[str, str]:
    """Separate a trailing image caption from the words: ("Look!", "a dog on a beach")."""
    match = _MEDIA.search(text)
    if not match:
        return text, ""
    return text[: match.start()].strip(), match.group("caption").strip()


def split_candidates(text: str) -> list[str]:
    """Split a turn into candidate statements: sentences, with empty pieces dropped."""
    text = text.strip()
    if not text:
        return []
    pieces: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        piece = text[start : match.start()]
        # "Dr. Weiss" or "e.g. Python": the period belongs to an abbreviation, not a boundary.
        if piece.endswith(".") and _last_word(piece) in _ABBREVIATIONS:
            continue
        pieces.append(piece)
        start = match.end()
    pieces.append(text[start:])
    return [p.strip() for p in pieces if _has_words(p)]


def split_clauses(sentence: str) -> list[str]:
    """Split one sentence at commas, dashes and "but" into clauses (for classification)."""
    parts = _CLAUSE_BREAK.split(sentence)
    return [p.strip() for p in parts if p and _has_words(p)]


def _has_words(piece: str) -> bool:
    return any(ch.isalnum() for ch in _PLACEHOLDER_SAFE.sub(" x ", piece))
