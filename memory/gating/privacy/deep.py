"""Redact every piece of free text inside a nested value: run input, graph state, checkpoints.

The gate redacts what becomes a memory, but a conversation's raw text is also kept as working
memory (checkpoints, the server's thread values and run records). This walks dicts, lists,
tuples and LangChain messages and passes each free-text string through the privacy filter.
Identifiers (`id`, `thread_id`, `*_ids`, hashes, message roles and types) are left alone: an id
is never a secret the user typed, and changing one would break the thread.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import BaseMessage

from memory.gating.privacy.filter import PrivacyFilter

_KEEP_KEYS = frozenset(
    {"id", "ids", "type", "role", "name", "hash", "kind", "status", "tool_call_id", "lc"}
)
# A state is re-serialised on every step with mostly the same strings (the whole message list):
# remembering the last few thousand answers keeps a step's cost to the new text only.
_CACHE_SIZE = 4096


def _is_identifier_key(key: object) -> bool:
    if not isinstance(key, str):
        return False
    lowered = key.lower()
    return lowered in _KEEP_KEYS or lowered.endswith(("_id", "_ids", "_hash", "_type"))


class StructureRedactor:
    """Applies one `PrivacyFilter` to all free text of a value, returning a redacted copy.

    The input is never modified: containers and messages are copied only where a string
    changed, so a value without secrets comes back as the same object.
    """

    def __init__(self, privacy: PrivacyFilter | None = None) -> None:
        """Use `privacy`, or the default filter (every built-in rule, emails and phones)."""
        self._privacy = privacy or PrivacyFilter()
        self._cache: OrderedDict[str, str] = OrderedDict()
        # The checkpointer serialises in worker threads, several at once.
        self._lock = threading.Lock()

    def text(self, value: str) -> str:
        """The redacted form of one string (cached)."""
        if not value.strip():
            return value
        with self._lock:
            hit = self._cache.get(value)
            if hit is not None:
                self._cache.move_to_end(value)
                return hit
        cleaned = self._privacy.clean(value)  # outside the lock: threads redact in parallel
        with self._lock:
            self._cache[value] = cleaned
            if len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return cleaned

    def value(self, value: Any) -> Any:
        """A copy of `value` with every free-text string redacted."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, BaseMessage):
            return self._message(value)
        if isinstance(value, Mapping):
            return self._mapping(value)
        if isinstance(value, list):
            items = [self.value(v) for v in value]
            return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
        if isinstance(value, tuple) and not hasattr(value, "_fields"):
            items = [self.value(v) for v in value]
            changed = any(a is not b for a, b in zip(items, value, strict=True))
            return tuple(items) if changed else value
        return value

    def _mapping(self, value: Mapping[Any, Any]) -> Any:
        out = {k: (v if _is_identifier_key(k) else self.value(v)) for k, v in value.items()}
        if all(out[k] is v for k, v in value.items()):
            return value
        if isinstance(value, dict) and type(value) is not dict:
            try:
                return type(value)(out)
            except TypeError:
                return out
        return out

    def _message(self, message: BaseMessage) -> BaseMessage:
        update: dict[str, Any] = {}
        content = self.value(message.content)
        if content is not message.content:
            update["content"] = content
        calls = getattr(message, "tool_calls", None)
        if calls:
            redacted_calls = self.value(calls)
            if redacted_calls is not calls:
                update["tool_calls"] = redacted_calls
        kwargs = self.value(message.additional_kwargs)
        if kwargs is not message.additional_kwargs:
            update["additional_kwargs"] = kwargs
        return message.model_copy(update=update) if update else message


__all__ = ["StructureRedactor"]
