"""Machine text in a message: pasted logs, tracebacks, code, JSON, SQL, config, CSV, repeats.

A paste is not something the user said: its lines are not preferences, rules or lessons, and a
900-line log is not 900 memories. `split_pastes` reads a message line by line, marks the lines
that have the shape of machine text (timestamps, stack frames, SQL statements, key=value and
JSON keys, code syntax and indentation, delimiter-separated rows, symbol density, lines repeated
verbatim, markdown fences), and returns the prose around them apart from the pastes, each paste
described by its class, size and first distinctive line (`Paste.describe`).

Detection is by the shape of the input, never its topic. Every pattern here is linear on any
input, each line is read up to `MAX_LINE_CHARS` and a message up to `MAX_SCAN_CHARS` (the rest
of a longer message is one paste with the part read), so the work is bounded per message.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

# A turn is at most 64,000 characters (`working.sensory`); a CLI argument or an imported
# message can be longer, and what lies past this is machine text or a document either way.
MAX_SCAN_CHARS = 64_000
MAX_LINE_CHARS = 2_000
# A single machine-looking line inside prose ("run `pip install x` first") stays prose; a paste
# is at least this many machine lines, or one dense line this long (minified JSON).
MIN_PASTE_LINES = 3
MIN_PASTE_CHARS = 200
# Prose lines between machine lines (a log message without a timestamp, a blank-free gap in a
# traceback) belong to the paste when the gap is at most this long.
MAX_GAP_LINES = 2
EXCERPT_CHARS = 100

_TIMESTAMP = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}"  # ISO 8601
    r"|\b\d{2}:\d{2}:\d{2}\b"  # a clock time with seconds
    r"|\[\d{2}/[A-Z][a-z]{2}/\d{4}:"  # common log format
    r"|^[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}"  # syslog
    r"|^\d{10}(?:\.\d+)?\b"  # epoch seconds
)
_LEVEL = re.compile(r"\b(?:TRACE|DEBUG|INFO|NOTICE|WARN(?:ING)?|ERROR|FATAL|CRITICAL|PANIC)\b")
_FRAME = re.compile(
    r"^Traceback \(most recent call last\)"
    r"|^[ \t]+File \"[^\"\n]*\", line \d+"
    r"|^[ \t]+at [\w$.<>/]+(?: ?\(|$)"  # Java / JavaScript
    r"|^[ \t]+\S+\.\w{1,5}:\d+(?::\d+)?(?: \+0x[0-9a-f]+)?$"  # Go: an indented file:line
    r"|^panic: "
    r"|^[ \t]*#\d+ +0x[0-9a-fA-F]+"  # gdb, native stacks
    r"|^goroutine \d+ \["
    r"|^(?:[\w$]+\.)*[\w$]*(?:Error|Exception|Warning)(?::|$)"
    r"|^[ \t]*Caused by: "
    r"|^[ \t]*\.\.\. \d+ more$"
)
_SQL = re.compile(
    r"^[ \t]*(?:SELECT|INSERT INTO|UPDATE|DELETE FROM|CREATE|ALTER|DROP|GRANT|REVOKE|BEGIN|COMMIT"
    r"|ROLLBACK|SET|COPY|VALUES|WITH|PRIMARY KEY|FOREIGN KEY|CONSTRAINT|REFERENCES)\b"
    r"|^[ \t]*--"
)
_KEY_VALUE = re.compile(
    r"^[ \t]*(?:export[ \t]+)?[A-Za-z_][\w.\-]*[ \t]*=[ \t]*\S"  # .env, INI, TOML
    r"|^[ \t]*(?:-[ \t]*)?[a-z_][A-Za-z0-9_.\-]*:(?:[ \t]|$)"  # YAML keys start lower-case
    r"|^[ \t]*\[[\w.\- \"]+\][ \t]*$"  # an INI / TOML section
    r"|^[ \t]*\"[^\"\n]{1,80}\"[ \t]*:"  # a JSON key
)
_CODE = re.compile(
    r"^[ \t]*(?:(?:def|class|import|return|elif|except|raise|function|const|let|var|public"
    r"|private|protected|static|package|fn|func|impl|struct|enum|interface)\b|async def"
    r"|from [\w.]+ import|try:|#include|type [A-Z]\w* |@\w+|if \(|for \(|while \(|switch \()"
    r"|(?:[{\[(;]|\):)[ \t]*$"  # a line that opens a block or ends a statement
    r"|^[ \t]*(?://|/\*|\*/|<\?|<!|</?[A-Za-z][\w-]*[ >/])"
    r"|^(?:diff --git |index [0-9a-f]+\.\.|--- a/|\+\+\+ b/|@@ -\d)|^[+-](?: {2,}|\t)\S"
    r"|\S(?: {3,}|\t)\S"  # columns aligned by spaces or tabs
    r"|^[ \t]*[}\])]"
    r"|^[ \t]*(?:\$|>>>|PS [A-Z]:\\[^>\n]*>) "  # a shell or REPL prompt
    r"|^(?: {4}|\t)"  # indentation: prose is not indented
    r"|=>|->|::|&&|\|\||!=|==|\+=|\w\(\)"
)
_SYMBOLS = frozenset("{}[]()<>=;:\"'/\\|_$#@*&%^~`+")
_COMMENT = re.compile(r"^[ \t]*(?:#|//|--|;|/\*)")
_FENCE = re.compile(r"^[ \t]*(?:```|~~~)")
_DELIMITERS = (",", "\t", "|", ";")
_MASK = re.compile(r"0x[0-9a-fA-F]+|[0-9a-fA-F]{8,}|\d+")
_SPACES = re.compile(r"\s+")
_PRIORITY = re.compile(r"\b(?:ERROR|FATAL|CRITICAL|PANIC|Exception|Error|failed|refused)\b")


@dataclass(frozen=True, slots=True)
class Paste:
    """One run of machine text: its lines, class and the shape of its content."""

    lines: tuple[str, ...]
    kind: str  # log / traceback / JSON document / SQL script / config file / table / ...
    # Lines past the scan limit: counted, never read.
    unread_lines: int = 0

    @property
    def distinct(self) -> int:
        """How many different lines it holds, numbers and hex ids masked (a log's messages)."""
        return len({_skeleton(line) for line in self.lines if line.strip()})

    @property
    def size(self) -> int:
        """Its non-blank lines, fences aside, read or not."""
        read = sum(1 for line in self.lines if line.strip() and not _FENCE.match(line))
        return read + self.unread_lines

    def label(self) -> str:
        """What it is, without its content: "a log of 900 lines"."""
        return f"a {self.kind} of {self.size} lines" if self.size > 1 else f"a one-line {self.kind}"

    def excerpt(self) -> str:
        """The line that says most about it: an error or exception line, else the first one."""
        lines = [line.strip() for line in self.lines if line.strip() and not _FENCE.match(line)]
        if not lines:
            return ""
        if self.kind == "traceback":
            frames = [line for line in lines if not _FRAME.match(line) or "Error" in line]
            pick = frames[-1] if frames else lines[-1]
        else:
            pick = next((line for line in lines if _PRIORITY.search(line[:MAX_LINE_CHARS])), "")
            pick = pick or lines[0]
        return _strip_timestamp(pick)

    def describe(self, redact: Callable[[str], str], *, verb: str = "pasted") -> str:
        """A one-line account: "pasted a log of 900 lines (7 distinct, notably: ERROR ...)".

        The excerpt is redacted whole before it is cut (a cut secret no longer matches its
        pattern); the caller's privacy filter runs over the sentence again as for any memory.
        """
        excerpt = _shorten(redact(self.excerpt()[:MAX_LINE_CHARS]))
        if self.kind == "repeated lines":
            return f"{verb} the same line {self.size} times: {excerpt}"
        distinct = f"{self.distinct} distinct, notably" if self.size > 1 else "reading"
        return f"{verb} {self.label()} ({distinct}: {excerpt})"


@dataclass(frozen=True, slots=True)
class Parts:
    """A message apart: its prose lines (in order, newline-joined) and its pastes."""

    prose: str
    pastes: tuple[Paste, ...]
    machine_chars: int = 0
    total_chars: int = 0

    @property
    def machine_share(self) -> float:
        """The share of the message's characters that are machine text."""
        return self.machine_chars / self.total_chars if self.total_chars else 0.0


def is_machine_line(line: str) -> bool:
    """True for a line with the shape of machine text; a sentence of prose is not one."""
    line = line[:MAX_LINE_CHARS]
    stripped = line.strip()
    if not stripped:
        return False
    if (
        _TIMESTAMP.search(stripped[:40])
        or _FRAME.search(line)
        or _SQL.search(line)
        or _KEY_VALUE.search(line)
        or _CODE.search(line)
        or (_LEVEL.search(stripped[:40]) and not stripped[:1].islower())
    ):
        return True
    visible = [ch for ch in stripped if not ch.isspace()]
    symbols = sum(1 for ch in visible if ch in _SYMBOLS)
    return len(visible) >= 8 and symbols / len(visible) >= 0.25


def split_pastes(text: str) -> Parts:
    """The message's prose and its pastes (`Parts`); a message with no paste is all prose."""
    cut = len(text) if len(text) <= MAX_SCAN_CHARS else text.rfind("\n", 0, MAX_SCAN_CHARS) + 1
    cut = cut or MAX_SCAN_CHARS
    head, rest = text[:cut], text[cut:]
    lines = head.split("\n")
    machine = _mark(lines)
    pastes: list[Paste] = []
    prose: list[str] = []
    machine_chars = 0
    i = 0
    while i < len(lines):
        if machine[i] is None:
            prose.append(lines[i])
            i += 1
            continue
        j = i
        while j < len(lines) and machine[j] == machine[i]:
            j += 1
        block = tuple(lines[i:j])
        pastes.append(Paste(block, _kind(block)))
        machine_chars += sum(len(line) + 1 for line in block)
        i = j
    if rest:
        # Past the scan limit: part of the last paste when there is one, one paste otherwise.
        unread = rest.count("\n") + 1
        if pastes:
            last = pastes.pop()
            pastes.append(Paste(last.lines, last.kind, last.unread_lines + unread))
        else:
            pastes.append(Paste((rest[:MAX_LINE_CHARS],), "block of machine text", unread - 1))
        machine_chars += len(rest)
    total = len(text)
    return Parts("\n".join(prose).strip(), tuple(pastes), min(machine_chars, total), total)


def is_machine_text(text: str) -> bool:
    """True when most of `text` is machine text (at least half of its characters)."""
    return split_pastes(text).machine_share >= 0.5


def _mark(lines: list[str]) -> list[int | None]:
    """Each line's paste number, or None for prose: fences first, then runs of machine lines."""
    out: list[int | None] = [None] * len(lines)
    number = 0
    fenced = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            if not fenced:
                number += 1
            out[i] = number
            fenced = not fenced
        elif fenced:
            out[i] = number
    repeated = _repeated(lines)
    shape = [
        out[i] is None and (i in repeated or is_machine_line(line)) for i, line in enumerate(lines)
    ]
    shape = _tabular(lines, shape)
    i = 0
    while i < len(lines):
        if not shape[i]:
            i += 1
            continue
        # A run: machine lines, joined across gaps of at most MAX_GAP_LINES other lines.
        start = end = i
        j = i + 1
        while j < len(lines) and out[j] is None and j - end <= MAX_GAP_LINES + 1:
            if shape[j]:
                end = j
            j += 1
        while start > 0 and out[start - 1] is None and _COMMENT.match(lines[start - 1]):
            start -= 1  # a heading comment ("# deploy/values.yaml") belongs to what follows
        count = sum(shape[start : end + 1])
        size = sum(len(line) for line in lines[start : end + 1])
        if count >= MIN_PASTE_LINES or size >= MIN_PASTE_CHARS:
            number += 1
            for k in range(start, end + 1):
                out[k] = number
        i = end + 1
    return out


def _repeated(lines: list[str]) -> set[int]:
    """The lines that occur three times or more, verbatim (blank lines aside)."""
    keys = [_SPACES.sub(" ", line[:MAX_LINE_CHARS].strip().casefold()) for line in lines]
    counts = Counter(k for k in keys if k)
    return {i for i, k in enumerate(keys) if k and counts[k] >= MIN_PASTE_LINES}


def _tabular(lines: list[str], shape: list[bool]) -> list[bool]:
    """Mark runs of three or more lines that split into the same number (2+) of fields: CSV."""
    out = list(shape)
    for delimiter in _DELIMITERS:
        counts = [line[:MAX_LINE_CHARS].count(delimiter) for line in lines]
        start = 0
        for i in range(1, len(lines) + 1):
            if i < len(lines) and counts[i] == counts[start]:
                continue
            if counts[start] >= 2 and i - start >= MIN_PASTE_LINES:
                for k in range(start, i):
                    out[k] = True
            start = i
    return out


def _kind(block: tuple[str, ...]) -> str:
    """The class of a paste, by which shape most of its lines have."""
    lines = [line[:MAX_LINE_CHARS] for line in block if line.strip() and not _FENCE.match(line)]
    if not lines:
        return "code block"
    n = len(lines)
    keys = Counter(_SPACES.sub(" ", line.strip().casefold()) for line in lines)
    if n >= MIN_PASTE_LINES and keys.most_common(1)[0][1] * 2 > n and len(keys) <= 2:
        return "repeated lines"
    if any(line.startswith("Traceback (most recent") for line in lines) or (
        sum(1 for line in lines if _FRAME.search(line)) * 3 >= n
    ):
        return "traceback"
    if sum(1 for line in lines if _TIMESTAMP.search(line.strip()[:40])) * 2 >= n:
        return "log"
    first = lines[0].lstrip()
    if first[:1] in "{[" and lines[-1].rstrip()[-1:] in "}]":
        return "JSON document"
    if sum(1 for line in lines if _SQL.search(line)) * 4 >= n:
        return "SQL script"
    if sum(1 for line in lines if _KEY_VALUE.search(line)) * 2 >= n:
        return "config file"
    if n >= MIN_PASTE_LINES and any(min(line.count(d) for line in lines) >= 2 for d in _DELIMITERS):
        return "table"
    if sum(1 for line in lines if _CODE.search(line)) * 2 >= n:
        return "code listing"
    return "block of machine text"


def _skeleton(line: str) -> str:
    return _MASK.sub("#", _strip_timestamp(line[:MAX_LINE_CHARS].strip()))


_LEADING_TIME = re.compile(
    r"^\[?(?:\d{4}-\d{2}-\d{2}[T ][\d:.,]+(?:Z|[+-]\d{2}:?\d{2})?|\d{2}:\d{2}:\d{2}[\d.,]*"
    r"|[A-Z][a-z]{2} [ \d]\d [\d:]+|\d{10}(?:\.\d+)?)\]?[ \t]*"
)


def _strip_timestamp(line: str) -> str:
    return _LEADING_TIME.sub("", line, count=1)


def _shorten(text: str) -> str:
    text = _SPACES.sub(" ", text).strip()
    if len(text) <= EXCERPT_CHARS:
        return text
    cut = text[:EXCERPT_CHARS]
    # A placeholder cut in half would read as text; cut before it instead.
    opened = cut.rfind("[REDACTED:")
    if opened != -1 and "]" not in cut[opened:]:
        cut = cut[:opened]
    return cut.rstrip() + "…"
