"""Citation markers belong to the composer: stored text never carries one that could pass.

The composer cites a recalled memory as `[mem:ID · DATE · KIND]` and the system rules tell the
model to trust and cite such markers. A memory, a summary or a shared note whose text held
`[MEM:deadbeef …]` would forge one: an instruction wrapped in it reads as a citation the
composer made. `neutralise` rewrites anything a reader would take for a marker (any case,
full-width or CJK brackets and colons, look-alike letters, spaces or invisible characters
between the letters, "[mem deadbeef]" without a colon) as a plain "(mem " that cites nothing,
and drops bidi override and isolate characters, which show a reviewer another text than the
model reads, and terminal control characters (ESC, C1), which act on the terminal of whoever
reads the text there.

A leaf module (no `memory` subpackage imports), so the storage layer can apply it to every row
it writes, the gate to every text it screens, and the composer once more to every line.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import replace

from memory.types import NewMemory

__all__ = ["has_marker", "neutralise", "neutralised"]

NEUTRAL = "(mem "
# Opening brackets after NFKC (which already folds "［" and "﹇" to "["): CJK and math forms a
# model reads as brackets too.
_BRACKETS = "[【〔〖〘〚⟦⁅❲⦋⦍⦏⟨〈《「『〈｢"
# Look-alikes of the letters of "mem" that NFKC and casefolding leave alone (Cyrillic, Greek,
# Latin epsilon, the digit in leetspeak); NFKC already maps math and full-width letters.
_LOOKALIKES = str.maketrans({"м": "m", "е": "e", "ё": "e", "є": "e", "ε": "e", "ɛ": "e",
                             "ϵ": "e", "℮": "e", "3": "e", "ӎ": "m", "ṃ": "m"})  # fmt: skip
# After NFKC, colon-like signs; "=" "#" "|" "-" also separate a label from an id.
_SEP = r"[:;=#|~\-∶ː˸꞉׃։᠄⁚]"
_GAP = r"[\s._·*'\"`]{0,3}"
# Bounded gaps only: linear on any text (audited with the other module-level patterns).
_MARKER = re.compile(
    "[" + re.escape(_BRACKETS) + r"]\s{0,8}m" + _GAP + "e" + _GAP + r"m"
    r"(?:\s{0,8}" + _SEP + r"|\s{1,8}(?=[0-9a-f]{4}))"
)
_RUNS = re.compile(r"[\x00-\x7f]+|[^\x00-\x7f]")
# Cheap first look, in C: a text with no bracket-like character at all needs no folding.
_ANY_BRACKET = re.compile("[" + re.escape(_BRACKETS) + "［﹇]")


@functools.lru_cache(maxsize=8192)
def _fold(ch: str) -> str:
    """One character as a reader sees it: NFKC, no marks or invisibles, casefolded, de-disguised."""
    out = []
    for part in unicodedata.normalize("NFD", unicodedata.normalize("NFKC", ch)):
        if unicodedata.category(part) in ("Mn", "Me", "Cf"):
            continue
        out.append(part)
    return "".join(out).casefold().translate(_LOOKALIKES)


def _folded(text: str) -> tuple[str, list[int]]:
    """The folded text and, per folded character, the index of the character it came from.

    ASCII runs fold in one call each (lower-casing keeps their length); only the other
    characters go one by one, so English text costs a few C-level passes.
    """
    chars: list[str] = []
    origin: list[int] = []
    for run in _RUNS.finditer(text):
        start, piece = run.start(), run.group(0)
        if piece.isascii():
            chars.append(piece.lower().replace("3", "e"))
            origin.extend(range(start, start + len(piece)))
            continue
        folded = _fold(piece)
        chars.append(folded)
        origin.extend([start] * len(folded))
    return "".join(chars), origin


def _spans(text: str) -> list[tuple[int, int]]:
    if not _ANY_BRACKET.search(text):
        return []
    folded, origin = _folded(text)
    return [(origin[m.start()], origin[m.end() - 1] + 1) for m in _MARKER.finditer(folded)]


def has_marker(text: str) -> bool:
    """True when `text` holds something a reader would take for a citation marker."""
    return bool(_spans(text))


# Bidi embeddings, overrides and isolates: they show a reader the text in another order than
# the model reads it ("Trojan Source"), so a stored line could say one thing to whoever reviews
# it and another to the model. No user's own words need them.
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")


# Terminal controls: C0 but tab and newline (ESC among them), DEL, C1 (CSI, OSC...). ESC and
# CSI start sequences that rewrite or hide the lines of whoever reads the text in a terminal
# (the CLI, a log), set its title or clipboard; no one's words need them. Line breaks of any
# kind become newlines; NUL stays, for the store to refuse.
_CONTROLS = re.compile(r"[\x01-\x08\x0e-\x1f\x7f-\x9f]")
_BREAKS = re.compile(r"\r\n?|[\x0b\x0c]")
# Whole sequences go, so their parameters leave no "[2K" or "]0;title" behind: CSI (ESC [ or
# U+009B) with its parameters and final byte, OSC (ESC ] or U+009D) up to its terminator, and
# two-character escapes. Bounded repeats, each stopping at the next ESC: linear on any text.
_SEQUENCES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]{0,32}[ -/]{0,8}[@-~]"
    r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]{0,512}(?:\x07|\x1b\\|\x9c)"
    r"|\x1b[0-Z\\-~]"
)


def neutralise(text: str) -> str:
    """`text` with citation-marker look-alikes as a plain "(mem ", no bidi control (idempotent).

    Nor terminal controls: tab and newline stay, other line breaks become newlines.
    """
    text = _BREAKS.sub("\n", _BIDI.sub("", text))
    text = _CONTROLS.sub("", _SEQUENCES.sub("", text))
    spans = _spans(text)
    if not spans:
        return text
    out: list[str] = []
    last = 0
    for start, end in spans:
        out += [text[last:start], NEUTRAL]
        last = end
    out.append(text[last:])
    return "".join(out)


def neutralised(item: NewMemory) -> NewMemory:
    """`item` with its content, context and outcome neutralised (itself when nothing changed)."""
    texts = (neutralise(item.content), neutralise(item.context), neutralise(item.outcome))
    if texts == (item.content, item.context, item.outcome):
        return item
    return replace(item, content=texts[0], context=texts[1], outcome=texts[2])
