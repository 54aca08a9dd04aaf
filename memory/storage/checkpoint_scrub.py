"""Replace strings in a thread's checkpoints: the original of a cleaned input must not linger.

A run's input is checkpointed before any node sees it (the `__start__` channel, the input task's
writes, and the first version of `messages`). When a node replaces part of that input — an image
re-encoded without its EXIF GPS, say — the earlier versions still hold the original. This finds
the checkpoint blobs and writes of one thread that contain a fragment of the original (a
`position()` scan, so only matching rows are decoded), decodes them with the checkpointer's
serializer, swaps every string holding a fragment for its replacement, and writes them back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields, is_dataclass, replace
from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from memory.storage.db import Connection

__all__ = ["replace_in_checkpoints", "swap_strings"]

# Only the channels a user's input flows through: a needle may also sit in other state (the
# fragments themselves), which must not be rewritten.
INPUT_CHANNELS = ("__start__", "messages")
_KEYS = {
    "checkpoint_blobs": ("thread_id", "checkpoint_ns", "channel", "version"),
    "checkpoint_writes": ("thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx"),
}


def swap_strings(value: Any, swap: Callable[[str], str | None]) -> Any:
    """`value` with every string `swap` maps to a replacement replaced (lists, dicts, messages)."""
    if isinstance(value, str):
        new = swap(value)
        return value if new is None else new
    if isinstance(value, list):
        return [swap_strings(v, swap) for v in value]
    if isinstance(value, tuple):
        return tuple(swap_strings(v, swap) for v in value)
    if isinstance(value, dict):
        return {k: swap_strings(v, swap) for k, v in value.items()}
    if isinstance(value, BaseMessage):
        return value.model_copy(update={"content": swap_strings(value.content, swap)})
    if is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: swap_strings(getattr(value, f.name), swap) for f in fields(value)}
        return replace(value, **changes)
    return value


async def replace_in_checkpoints(
    conn: Connection,
    thread_id: str,
    replacements: Mapping[str, Callable[[str], str]],
    channels: Sequence[str] | None = INPUT_CHANNELS,
) -> int:
    """Rewrite the checkpoint rows of `thread_id` (in `channels`, or all) holding any needle.

    `replacements` maps a needle (a fragment of the original) to a function giving the
    replacement of a string that contains it. Returns how many rows were rewritten.
    """
    if not replacements:
        return 0
    serde = JsonPlusSerializer()
    needles = list(replacements)

    def swap(text: str) -> str | None:
        for needle, make in replacements.items():
            if needle in text:
                return make(text)
        return None

    rewritten = 0
    for table, keys in _KEYS.items():
        if await conn.fetchval("SELECT to_regclass($1)", table) is None:
            continue
        rows = await conn.fetch(
            f"SELECT {', '.join(keys)}, type, blob FROM \"{table}\""
            " WHERE thread_id = $1 AND ($2::text[] IS NULL OR channel = ANY($2::text[]))"
            " AND blob IS NOT NULL"
            " AND EXISTS (SELECT 1 FROM unnest($3::text[]) AS n"
            "             WHERE position(convert_to(n, 'UTF8') in blob) > 0)",
            thread_id,
            None if channels is None else list(channels),
            needles,
        )
        where = " AND ".join(f"{k} = ${i}" for i, k in enumerate(keys, start=3))
        for row in rows:
            value = serde.loads_typed((row["type"], bytes(row["blob"])))
            kind, blob = serde.dumps_typed(swap_strings(value, swap))
            await conn.execute(
                f'UPDATE "{table}" SET type = $1, blob = $2 WHERE {where}',
                kind,
                blob,
                *(row[k] for k in keys),
            )
            rewritten += 1
    return rewritten
