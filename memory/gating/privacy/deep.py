"""Redact every piece of free text inside a nested value: run input, graph state, checkpoints.

The gate redacts what becomes a memory, but a conversation's raw text is also kept as working
memory (checkpoints, the server's thread values and run records). This walks dicts, lists,
tuples and LangChain messages and passes each free-text string through the privacy filter.
Identifiers (`id`, `thread_id`, `*_ids`, hashes, message roles and types, names) are left alone
when they read as identifiers: changing one would break the thread. But a client chooses many of
them (a message's `id` and `name`, an image block's `name`, any `*_id` key it adds), so a value
under such a key is kept only while it is one token with no named secret in it (digits that look
like a card or phone number inside a uuid's hex are no secret); anything else is free text.
Mapping keys are judged the same way: a client's message may carry fields of its own, whose keys
are kept in the thread's state, so a key that holds a secret is redacted too.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import BaseMessage

from memory.gating.privacy.filter import PrivacyFilter

_KEEP_KEYS = frozenset(
    {"id", "ids", "type", "role", "name", "hash", "kind", "status", "tool_call_id", "lc"}
)
# An identifier is one token of printable ASCII: no blank, nothing a sentence needs.
_ID_SHAPE = re.compile(r"[!-~]{1,256}")
# Findings that digits alone make (a uuid's hex holds "cards" and "phone numbers") or that name
# a person rather than a secret (an email as a user id): no reason to change an identifier.
_ID_HARMLESS_KINDS = frozenset({"card", "phone", "ssn", "cn_id", "iban", "bank_account", "email"})
# A state is re-serialised on every step with mostly the same strings (the whole message list):
# remembering what was already redacted keeps a step's cost to the new text only. The filter
# costs about 1 ms per 500 characters; a remembered string costs one keyed hash (~1 us) and a
# lookup. Bounded twice: by entries and by the characters of redacted text held (a few MB),
# since one message may be 64,000 characters.
_CACHE_ENTRIES = 8192
_CACHE_CHARS = 4_000_000


# Keys a state is made of ("content", "tool_calls", "additional_kwargs", a node's name): lower
# case letters and underscores name no secret, so they skip the filter (and its cache).
_PLAIN_KEY = re.compile(r"[a-z_]{1,40}")


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
        # Keys are keyed hashes of the raw strings, never the strings: the cache must not become
        # a second place where a secret the user typed is kept. The key is random per redactor,
        # so a hash says nothing outside this process (no guessing a short secret offline).
        self._key = os.urandom(32)
        # None for a string the filter left as it was: the caller's own string is the answer,
        # so no text is held for it and an unchanged value keeps its identity (the message that
        # holds it is not copied).
        self._cache: OrderedDict[bytes, str | None] = OrderedDict()
        self._chars = 0
        # The checkpointer serialises in worker threads, several at once.
        self._lock = threading.Lock()

    def _digest(self, value: str) -> bytes:
        data = value.encode("utf-8", "surrogatepass")
        return hashlib.blake2b(data, key=self._key, digest_size=16).digest()

    def text(self, value: str) -> str:
        """The redacted form of one string (remembered, so a string is filtered once)."""
        if not value or value.isspace():
            return value
        key = self._digest(value)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                hit = self._cache[key]
                return value if hit is None else hit
        cleaned = self._privacy.clean(value)  # outside the lock: threads redact in parallel
        entries: list[tuple[bytes, str | None]] = [(key, None if cleaned == value else cleaned)]
        if cleaned != value and self._privacy.clean(cleaned) == cleaned:
            # The redacted text comes back as it is when the checkpoint is loaded and saved
            # again on the next turn: known clean, it is not filtered a second time. Only when
            # filtering it again really changes nothing (checked once, here).
            entries.append((self._digest(cleaned), None))
        with self._lock:
            for k, v in entries:
                self._remember(k, v)
        return cleaned

    def identifier(self, value: Any) -> Any:
        """The value of an identifier key: kept if it reads as one, else redacted as text."""
        if isinstance(value, list):
            items = [self.identifier(v) for v in value]
            return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
        if not isinstance(value, str) or not value:
            return value
        if not _ID_SHAPE.fullmatch(value):
            return self.text(value)  # a sentence under an id key: free text
        key = self._digest("\x00id\x00" + value)  # its own domain in the shared cache
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                hit = self._cache[key]
                return value if hit is None else hit
        redaction = self._privacy.redact(value)
        named = {f.kind for f in redaction.findings} - _ID_HARMLESS_KINDS
        cleaned = redaction.text if named else value
        with self._lock:
            self._remember(key, None if cleaned == value else cleaned)
        return cleaned

    def _remember(self, key: bytes, cleaned: str | None) -> None:
        size = len(cleaned or "")
        if size > _CACHE_CHARS // 8:
            return  # one huge value would push out everything else
        if key in self._cache:
            self._chars -= len(self._cache.pop(key) or "")
        self._cache[key] = cleaned
        self._chars += size
        while len(self._cache) > _CACHE_ENTRIES or self._chars > _CACHE_CHARS:
            self._chars -= len(self._cache.popitem(last=False)[1] or "")

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

    def key(self, key: Any) -> Any:
        """A mapping's key, kept while it reads as an identifier with no named secret in it.

        A client chooses the keys of what it sends: an unknown field of a message becomes one of
        its `additional_kwargs`, kept in the thread's state and checkpoints, so a secret sent as
        a key ("sk-proj-…": "my key") is redacted like a value under an identifier key is.
        """
        if not isinstance(key, str) or _PLAIN_KEY.fullmatch(key):
            return key
        return self.identifier(key)

    def _mapping(self, value: Mapping[Any, Any]) -> Any:
        out: dict[Any, Any] = {}
        renamed = False
        for k, v in value.items():
            item = self.identifier(v) if _is_identifier_key(k) else self.value(v)
            name = self.key(k)
            if name is not k:
                renamed = True
                # Two secrets may redact to one placeholder: each keeps its own entry.
                base, n = name, 2
                while name in out or name in value:
                    name, n = f"{base}#{n}", n + 1
            out[name] = item
        if not renamed and all(out[k] is v for k, v in value.items()):
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
        # A tool's structured result (`ToolMessage.artifact`: what a scratchpad write or a
        # finished task carried) and calls the model made but the parser refused hold free
        # text as much as the content does.
        for attr in ("tool_calls", "invalid_tool_calls", "artifact"):
            current = getattr(message, attr, None)
            if current:
                redacted = self.value(current)
                if redacted is not current:
                    update[attr] = redacted
        for attr in ("id", "name"):  # chosen by the client for its own messages
            current = getattr(message, attr, None)
            checked = self.identifier(current)
            if checked is not current:
                update[attr] = checked
        kwargs = self.value(message.additional_kwargs)
        if kwargs is not message.additional_kwargs:
            update["additional_kwargs"] = kwargs
        return message.model_copy(update=update) if update else message


__all__ = ["StructureRedactor"]
