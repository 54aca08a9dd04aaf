"""JSON from clients, parsed only when its nesting is bounded.

Python's JSON parser recurses once per nesting level: a 100,000-deep `[[[…]]]` (200 KB) raises
`RecursionError`, not a `ValueError`, so an import crashed with a traceback and an HTTP route
answered 500; and a value a few hundred levels deep that does parse can still exhaust the
recursion of whatever walks it next (json.dumps, Postgres's jsonb, outlines). `loads_bounded`
measures the depth first, in one pass without recursion, and refuses past `MAX_JSON_DEPTH` with
`JSONDepthError`, a `ValueError` like every other malformed-JSON error, so callers that already
refuse bad JSON refuse this too.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_JSON_DEPTH = 100
"""Arrays and objects inside one another. A conversation export nests ~6 deep (a LoCoMo file:
list, sample, conversation, session, turn), an API body 2-3; Python's own limit is ~1,000."""

# Outside strings, the next character that matters to nesting; a string literal whole, from its
# opening quote (possessive: each character is read once, so one match is linear; it starts with
# a quote, so a scan from every position fails at once where there is none).
_NEXT = re.compile(r'["\[\]{}]')
_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"', re.DOTALL)


class JSONDepthError(ValueError):
    """JSON nested deeper than allowed."""

    def __init__(self, limit: int) -> None:
        """Name the limit in the message."""
        super().__init__(f"JSON nested deeper than {limit} levels")
        self.limit = limit


def json_depth_exceeds(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether `text` opens more than `limit` arrays/objects inside one another (outside strings).

    Linear time, no recursion: it steps from bracket to bracket and skips each string in one
    regex match. Malformed text is measured as written (an unterminated string ends the scan);
    the parser reports what else is wrong with it.
    """
    if text.count("[") + text.count("{") <= limit:  # too few brackets to nest that deep
        return False
    depth, at = 0, 0
    while (found := _NEXT.search(text, at)) is not None:
        char, at = found[0], found.end()
        if char == '"':
            string = _STRING.match(text, found.start())
            if string is None:
                return False
            at = string.end()
        elif char in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth = max(0, depth - 1)
    return False


def loads_bounded(text: str | bytes, limit: int = MAX_JSON_DEPTH) -> Any:
    """`json.loads(text)`, refusing nesting past `limit` with `JSONDepthError` before parsing."""
    if isinstance(text, bytes):  # decoded as `json.loads` decodes bytes (UTF-8, -16 or -32)
        text = text.decode(json.detect_encoding(text), "surrogatepass")
    if json_depth_exceeds(text, limit):
        raise JSONDepthError(limit)
    return json.loads(text)


__all__ = ["MAX_JSON_DEPTH", "JSONDepthError", "json_depth_exceeds", "loads_bounded"]
