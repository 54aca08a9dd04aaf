"""A consolidation diff shown to a tenant's admin carries no memory text (sec3 finding 10)."""

from __future__ import annotations

from memory.longterm.consolidation.history import DIFF_FIELDS, _without_text
from memory.storage.vector import text_digest

KEY = b"k" * 32


def _digest(text: str) -> str:
    return text_digest(KEY, text)


def test_a_hidden_side_keeps_every_field_but_the_text() -> None:
    side = {name: None for name in DIFF_FIELDS} | {"content": "I prefer TypeScript.", "pinned": 1}
    hidden = _without_text(side, "m1", _digest)
    assert hidden is not None and hidden["content"] is None and hidden["pinned"] == 1
    assert hidden["content_chars"] == len("I prefer TypeScript.")
    assert "TypeScript" not in repr(hidden)
    assert _without_text(None, "m1", _digest) is None  # a created or deleted side stays absent


def test_a_digest_compares_one_memorys_sides_only() -> None:
    """Equal before and after show equal digests; two memories' equal texts do not match,
    nor does a digest of the bare text (what an audit event of a refused text carries)."""
    text = {"content": "My sister lives in Lyon."}
    one, same = _without_text(text, "m1", _digest), _without_text(dict(text), "m1", _digest)
    other = _without_text(text, "m2", _digest)
    changed = _without_text({"content": "My sister lives in Nice."}, "m1", _digest)
    assert one and same and other and changed
    assert one["content_digest"] == same["content_digest"] != other["content_digest"]
    assert one["content_digest"] != changed["content_digest"]
    assert one["content_digest"] != _digest(text["content"])
