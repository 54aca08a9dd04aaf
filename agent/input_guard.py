"""The server's door for run input: redact secrets and refuse oversized text before it is recorded.

The LangGraph server records a run's input in its run registry, puts it in the thread's values
and writes it to `checkpoint_writes` before the graph's first node runs, so `perceive` is too
late to keep a secret or a 5 MB paste out of storage. The auth handler for run creation receives
the run's keyword arguments by reference and calls `guard_run_input` on them: the text is
redacted in place (the graph, the registry and the checkpoints only ever see the placeholders,
and the gate still knows what kind of secret was there), and text longer than the server's limit
is refused with 413 and a message that says the limit.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from memory.gating.privacy.deep import StructureRedactor
from memory.settings import Settings

TOTAL_FACTOR = 4
"""A run's input may carry several messages; all of them together get this many times the limit."""

_REDACTOR = StructureRedactor()


class InputTooLargeError(ValueError):
    """Run input over the server's size limit; the message says the sizes."""


def max_input_chars() -> int:
    """The server's limit on one message's text (`MEMORY_MAX_INPUT_CHARS`, default 64,000)."""
    return Settings.from_env().max_input_chars


def _strings(value: Any) -> list[str]:
    """Every string inside `value` (dict values, list items), in order."""
    out: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return out


def check_size(value: Any, limit: int) -> None:
    """Raise `InputTooLargeError` when one string of `value`, or all together, is too long."""
    strings = _strings(value)
    longest = max((len(s) for s in strings), default=0)
    if longest > limit:
        raise InputTooLargeError(
            f"message too long: {longest:,} characters; this server accepts at most {limit:,} "
            "per message. Nothing was stored; send a shorter message or split it."
        )
    total = sum(len(s) for s in strings)
    if total > limit * TOTAL_FACTOR:
        raise InputTooLargeError(
            f"input too long: {total:,} characters in all; this server accepts at most "
            f"{limit * TOTAL_FACTOR:,} per run. Nothing was stored."
        )


def redacted_output(value: Any) -> Any:
    """`value` (the model's answer) with every secret in its text and tool calls redacted.

    The server records a run's output in its own thread registry (`GET /threads/{id}`, thread
    search, and under `langgraph dev` a file on disk) apart from the checkpoints, whose
    serializer redacts: a key the model repeats back must not reach that registry either.
    """
    return _REDACTOR.value(value)


def guard_run_input(kwargs: MutableMapping[str, Any], limit: int | None = None) -> None:
    """Check the size of, then redact in place, a run's `input` and `command` (resume values)."""
    limit = limit or max_input_chars()
    for key in ("input", "command"):
        if kwargs.get(key) is not None:
            check_size(kwargs[key], limit)
    for key in ("input", "command"):
        if kwargs.get(key) is not None:
            kwargs[key] = _REDACTOR.value(kwargs[key])


__all__ = [
    "InputTooLargeError",
    "check_size",
    "guard_run_input",
    "max_input_chars",
    "redacted_output",
]
