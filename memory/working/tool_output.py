"""Tool outputs are cut down before they enter the context: a raw dump crowds out the talk.

Text keeps its head and tail (errors and totals tend to sit at the end) with a marker saying
how much was cut; JSON gets a structural outline (keys, list lengths, samples) instead of a
blind cut. The SHA-256 of the full output is kept so the original can be traced.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from typing_extensions import TypedDict

from memory.working.json_outline import json_outline, parse_json
from memory.working.tokens import count_tokens, truncate_to_tokens

# 1,000 tokens per tool result: ten results fit a 10k-token turn without crowding the rest.
DEFAULT_TOOL_TOKENS = 1000
# The head gets 60 %: it usually says what the output is; the tail holds errors and totals.
HEAD_SHARE = 0.6
_MARKER_RESERVE = 48  # tokens kept free for the "... cut ..." marker line


class ToolOutputView(TypedDict):
    """What of a tool's output enters the context."""

    text: str
    truncated: bool
    original_tokens: int
    sha256: str
    kind: Literal["text", "json"]


def _snap_head(head: str) -> str:
    """Cut back to the last line break when one is in the last fifth (whole lines read better)."""
    nl = head.rfind("\n")
    return head[: nl + 1] if nl >= len(head) * 0.8 else head


def _snap_tail(tail: str) -> str:
    nl = tail.find("\n")
    return tail[nl + 1 :] if 0 <= nl <= len(tail) * 0.2 else tail


def _head_tail(text: str, max_tokens: int, original_tokens: int, sha: str) -> str:
    room = max_tokens - _MARKER_RESERVE
    if room < 8:  # too small a budget for head + marker + tail: keep the head only
        return truncate_to_tokens(text, max_tokens)
    head = _snap_head(truncate_to_tokens(text, int(room * HEAD_SHARE)))
    tail = _snap_tail(truncate_to_tokens(text, room - count_tokens(head), from_end=True))
    cut_chars = len(text) - len(head) - len(tail)
    cut_tokens = max(original_tokens - count_tokens(head) - count_tokens(tail), 0)
    lead = "" if head.endswith("\n") or not head else "\n"
    marker = (
        f"{lead}[... cut {cut_tokens:,} of {original_tokens:,} tokens ({cut_chars:,} characters) "
        f"from the middle; full output sha256:{sha[:16]} ...]\n"
    )
    return head + marker + tail


def _json_view(value: Any, max_tokens: int, original_tokens: int, sha: str) -> str:
    header = (
        f"[JSON output of {original_tokens:,} tokens, shown as its structure "
        f"(keys, list lengths, first items); sha256:{sha[:16]}]\n"
    )
    text = header + json_outline(value)
    if count_tokens(text) <= max_tokens:
        return text
    return _head_tail(text, max_tokens, count_tokens(text), sha)


def truncate_tool_output(
    output: object, *, max_tokens: int = DEFAULT_TOOL_TOKENS
) -> ToolOutputView:
    """The context-sized view of a tool's output (non-strings are JSON-encoded first)."""
    if isinstance(output, str):
        text = output
    else:
        text = json.dumps(output, ensure_ascii=False, default=str)
    sha = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    tokens = count_tokens(text)
    value = parse_json(text)
    kind: Literal["text", "json"] = "json" if value is not None else "text"
    if tokens <= max_tokens:
        return ToolOutputView(
            text=text, truncated=False, original_tokens=tokens, sha256=sha, kind=kind
        )
    view = (
        _json_view(value, max_tokens, tokens, sha)
        if value is not None
        else _head_tail(text, max_tokens, tokens, sha)
    )
    if count_tokens(view) > max_tokens:  # the marker's own cost pushed it over: trim the end
        view = truncate_to_tokens(view, max_tokens)
    return ToolOutputView(text=view, truncated=True, original_tokens=tokens, sha256=sha, kind=kind)
