"""Split a statement into a predicate frame and its values, for conflict detection.

"Actually I now prefer Rust" becomes frame "i PREF X" and values {rust}; "我现在改喝茶了"
becomes frame "我喝X" and values {茶}. Two statements with the same frame and different values
fill the same slot differently (a contradiction); the same values in different words are a
paraphrase ("I'd rather use dark mode" = "dark mode please"). Preference verbs collapse to
PREF and correction markers ("actually", "now", "改") are dropped from the frame but recorded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory.attributes import Setting, settings
from memory.gating.conflicts import vocab as v

_WORD = re.compile(
    r"\d[\d,.]*\d|[a-z0-9][a-z0-9'+#-]*(?:\.[a-z0-9]+)*|[\u4e00-\u9fff]+", re.IGNORECASE
)


@dataclass(frozen=True, slots=True)
class Frame:
    """A statement's predicate frame, its value words, and its markers."""

    frame: tuple[str, ...]
    values: frozenset[str]
    value_spans: tuple[str, ...]
    negative: bool
    correction: bool
    additive: bool
    exclusive: bool
    listy: bool
    settings: tuple[Setting, ...] = ()
    text: str = ""

    @property
    def cjk(self) -> bool:
        """True when the values are Chinese (the English embedder cannot compare those)."""
        return any(_is_cjk(v) for v in self.values)


def analyse(text: str) -> Frame:
    """Frame, values and markers of one statement."""
    frame: list[str] = []
    values: list[str] = []
    spans: list[str] = []
    exclusive = False
    joined = False  # whether the next value word continues the current value span
    for position, (token, raw) in enumerate(_tokens(text)):
        # A capitalised word inside the sentence is a name ("Go", "Rust"), whatever it spells.
        named = position > 0 and raw[:1].isupper() and raw != "I"
        kind = "value" if named else _classify(token)
        exclusive = exclusive or token in v.EXCLUSIVE or token in ("更喜欢", "最喜欢")
        if kind == "value":
            if joined:
                spans[-1] = f"{spans[-1]}{'' if _is_cjk(raw) else ' '}{raw}"
            else:
                frame.append("X")
                spans.append(raw)
            values.append(singular(token))
        elif kind != "skip":
            frame.append(kind)
        joined = kind == "value"
    return Frame(
        frame=tuple(frame),
        values=frozenset(values),
        value_spans=tuple(spans),
        negative=bool(v.NEGATION.search(text)),
        correction=bool(v.CORRECTION.search(text)),
        additive=bool(v.ADDITIVE.search(text)),
        exclusive=exclusive,
        listy=len(v.LIST.findall(text)) >= 1 and len(spans) >= 2,
        settings=settings(text),
        text=text,
    )


def _is_cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def _tokens(text: str) -> list[tuple[str, str]]:
    """(lower-cased, original) words; Chinese runs are cut at frame words into pieces."""
    out: list[tuple[str, str]] = []
    text = text.replace("’", "'")
    end = 0
    for match in _WORD.finditer(text):
        if text[end : match.start()].strip():
            out.append((",", ","))  # punctuation ends a value: "旅行、美食" are two items
        end = match.end()
        word = match.group().rstrip(".")
        if _is_cjk(word):
            out.extend((p, p) for p in _split_cjk(word))
        elif "'" in word and word.lower().split("'")[-1] in v.CLITICS:
            head, _, tail = word.rpartition("'")
            out += [(head.lower(), head), ("'" + tail.lower(), "'" + tail)]
        elif word:
            out.append((_canonical_number(word.lower()), word))
    return out


def _split_cjk(run: str) -> list[str]:
    pieces: list[str] = []
    buffer = ""
    i = 0
    while i < len(run):
        hit = next((w for w in v.ZH_FRAME if run.startswith(w, i)), None)
        if hit is None:
            buffer += run[i]
            i += 1
            continue
        if buffer:
            pieces.append(buffer)
            buffer = ""
        pieces.append(hit)
        i += len(hit)
    if buffer:
        pieces.append(buffer)
    return pieces


def singular(word: str) -> str:
    """One form for singular and plural values: pizzas -> pizza, berries -> berry."""
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def heads(frame: Frame) -> frozenset[str]:
    """The last word of each value span: the head noun in English ("aisle *seats*")."""
    out = set()
    for span in frame.value_spans:
        words = span.split()
        if words:
            out.add(singular(_canonical_number(words[-1].lower())))
    return frozenset(out)


def _canonical_number(word: str) -> str:
    return word.replace(",", "") if re.fullmatch(r"[\d,.]+", word) else word


def _classify(token: str) -> str:
    """Return "value", "skip" (markers), or the frame token ("PREF" for preference verbs)."""
    if token in v.PREF or token in v.ZH_PREF:
        return "PREF"
    if token in v.SKIP or token in v.ZH_MARKERS:
        return "skip"
    if token == ",":
        return ","
    if token in v.FRAME or token in v.ZH_FRAME:
        return token
    if token.endswith("s") and singular(token) in v.FRAME:
        # A frame verb in the third person ("my team *uses* Jira"): the same predicate as
        # "we use", not a value of its own.
        return singular(token)
    if len(token) == 1 and token.isascii() and not token.isdigit():
        # Single letters are noise; a single digit is a value ("March 3" vs "March 10").
        return "skip"
    return "value"


def frame_similarity(a: Frame, b: Frame) -> float:
    """Jaccard overlap of the two frames' tokens (word-level; Chinese frame words count whole)."""
    fa, fb = set(a.frame), set(b.frame)
    if not fa or not fb:
        return 0.0
    return len(fa & fb) / len(fa | fb)


def merge_text(existing: str, addition: Frame, known: frozenset[str]) -> str:
    """Append the incoming values not in `known` to a list memory ("Python and Go" + Rust)."""
    items = [s for s in addition.value_spans if not set(s.lower().split()) <= known]
    if not items:
        return existing
    base = existing.rstrip(" .。")
    if addition.cjk or _is_cjk(base):
        return base + "、" + "、".join(items)
    if " and " in base:
        head, _, last = base.rpartition(" and ")
        return f"{head}, {last} and {', '.join(items)}"
    return f"{base}, {', '.join(items)}"
