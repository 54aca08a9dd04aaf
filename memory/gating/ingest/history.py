"""Bulk import of past conversations: JSONL messages or a LoCoMo-style conversation file.

Messages are read into a flat list, turned into memories (through the gate, or raw: one memory
per message), embedded a batch at a time (one batch ahead of the writes) and written with
`MemoryStore.write_many` in batches, one Postgres transaction and one Chroma upsert per batch.
Secrets are redacted in both modes, and a message holding a high-risk secret is never stored.

Resuming: every memory carries `provenance.import = {"source": <file digest>, "index": <message
number>}`. A batch is one transaction, and batches are written in order, so the highest index
stored for this file is where the previous run got to; a rerun skips every message up to it.
The messages after it that the gate dropped are simply gated (and dropped) again.
Bulk import skips the per-message near-duplicate and conflict checks of the chat path (they
cost a search per message); `memory-agent consolidate` merges near-duplicates afterwards.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from memory.gating.gate import GatePolicy, Role, gate
from memory.gating.ingest.pastes import bounded, paste_decision
from memory.gating.ingest.write_back import to_new_memory
from memory.gating.machine_text import split_pastes
from memory.gating.privacy import PrivacyFilter
from memory.gating.privacy.splits import without_split_secrets
from memory.gating.rules.decide import screen
from memory.json_limits import JSONDepthError, loads_bounded
from memory.storage.bulk import analyze
from memory.storage.embedding import Vectors
from memory.storage.history_imports import imported_up_to
from memory.storage.store import MemoryStore
from memory.storage.tombstones import UserForgottenError, is_forgotten, writer
from memory.types import Category, MemoryKind, NewMemory, Scope, Source

Format = Literal["auto", "jsonl", "locomo"]
# Turns on each side that form a memory's context, as the agent's own ingest does.
CONTEXT_TURNS = 1
MAX_FILE_BYTES = 512 * 1024 * 1024
# No "system": a file is client-supplied, and the gate trusts system text as the operator's
# (it skips the poisoning screen), so a "system" line is read as the user's words.
_ROLES: frozenset[str] = frozenset({"user", "assistant", "tool"})
_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%d %B, %Y", "%Y-%m-%d")


class ImportFileError(ValueError):
    """The file cannot be imported (unreadable, wrong format); nothing was written."""


@dataclass(slots=True)
class Message:
    """One message of the history, in file order."""

    index: int
    role: Role
    text: str
    speaker: str | None = None
    session: str | None = None
    occurred_at: datetime | None = None
    dia_id: str | None = None


@dataclass(slots=True)
class ImportReport:
    """What an import did."""

    source: str
    messages: int = 0
    skipped_done: int = 0  # already imported by an earlier, interrupted run
    stored: int = 0
    dropped: int = 0
    seconds: float = 0.0
    reasons: dict[str, int] = field(default_factory=dict)

    @property
    def per_second(self) -> float:
        """Memories stored per second of import."""
        return self.stored / self.seconds if self.seconds else 0.0


def file_digest(path: Path) -> str:
    """A short content digest: the resume key (a renamed file resumes; an edited one restarts)."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:24]


def read_messages(path: Path, fmt: Format = "auto") -> list[Message]:
    """The file's messages in order; raises ImportFileError with a clear reason."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ImportFileError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if size > MAX_FILE_BYTES:
        raise ImportFileError(f"{path} is {size:,} bytes; the limit is {MAX_FILE_BYTES:,}")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ImportFileError(f"cannot read {path} as UTF-8 text: {exc}") from exc
    if fmt == "auto":
        fmt = "locomo" if text.lstrip().startswith("[") or path.suffix == ".json" else "jsonl"
    return _locomo(text, path) if fmt == "locomo" else _jsonl(text, path)


def _parse_time(value: object) -> datetime | None:
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            return datetime.fromtimestamp(float(value), tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    cleaned = " ".join(value.replace("\u202f", " ").split())
    try:
        parsed = datetime.fromisoformat(cleaned.replace("Z", "+00:00"))
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    except ValueError:
        pass
    for layout in _DATE_FORMATS:
        try:
            return datetime.strptime(cleaned, layout).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def _jsonl(text: str, path: Path) -> list[Message]:
    out: list[Message] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = loads_bounded(line)
        except JSONDepthError as exc:
            raise ImportFileError(f"{path}:{number}: {exc}") from None
        except json.JSONDecodeError as exc:
            raise ImportFileError(f"{path}:{number}: not JSON ({exc.msg})") from exc
        if not isinstance(raw, dict):
            raise ImportFileError(f"{path}:{number}: expected an object per line")
        content = raw.get("content", raw.get("text"))
        if not isinstance(content, str):
            raise ImportFileError(f"{path}:{number}: no text in 'content' (or 'text')")
        role = str(raw.get("role") or "user").lower()
        if role not in _ROLES:
            # Client-supplied roles are not trusted: anything unknown is read as the user's
            # words, never as system text.
            role = "user"
        session = raw.get("thread_id", raw.get("session"))
        out.append(
            Message(
                index=len(out),
                role=role,  # type: ignore[arg-type]
                text=content,
                speaker=str(raw["speaker"]) if raw.get("speaker") else None,
                session=str(session) if session is not None else None,
                occurred_at=_parse_time(raw.get("timestamp", raw.get("created_at"))),
            )
        )
    return out


def _locomo(text: str, path: Path) -> list[Message]:
    try:
        data = loads_bounded(text)
    except JSONDepthError as exc:
        raise ImportFileError(f"{path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ImportFileError(f"{path}: not JSON ({exc.msg})") from exc
    samples = data if isinstance(data, list) else [data]
    out: list[Message] = []
    for number, sample in enumerate(samples):
        conv = sample.get("conversation") if isinstance(sample, dict) else None
        if not isinstance(conv, dict):
            raise ImportFileError(f"{path}: sample {number} has no 'conversation' object")
        sample_id = str(sample.get("sample_id") or number)
        numbers = (str(k).removeprefix("session_") for k in conv if str(k).startswith("session_"))
        keys = [f"session_{n}" for n in numbers if n.isascii() and n.isdigit()]
        previous: datetime | None = None
        for key in sorted(keys, key=lambda k: int(k.removeprefix("session_"))):
            turns = conv[key]
            date = _parse_time(conv.get(f"{key}_date_time")) or previous
            previous = date
            for raw in turns if isinstance(turns, list) else []:
                if not isinstance(raw, dict) or not isinstance(raw.get("text"), str):
                    continue
                caption = raw.get("blip_caption")
                body = " ".join(raw["text"].split())
                speaker = str(raw.get("speaker") or "") or None
                out.append(
                    Message(
                        index=len(out),
                        role=speaker_role(speaker),
                        text=f"{body} [image: {caption}]" if caption else body,
                        speaker=speaker,
                        session=f"{sample_id}:{key.removeprefix('session_')}",
                        occurred_at=date,
                        dia_id=str(raw["dia_id"]) if raw.get("dia_id") else None,
                    )
                )
    return out


_ASSISTANT_NAMES = frozenset({"assistant", "ai", "助手"})


def speaker_role(speaker: str | None) -> Role:
    """The role of a named speaker in a conversation file.

    The assistant's by its usual names; anyone else's words are a user's (never system text).
    """
    return "assistant" if (speaker or "").strip().lower() in _ASSISTANT_NAMES else "user"


def _context(messages: list[Message], i: int) -> str:
    lo, hi = max(0, i - CONTEXT_TURNS), min(len(messages), i + CONTEXT_TURNS + 1)
    here = messages[i].session
    return "\n".join(
        f"{m.speaker or m.role}: {_readable(m.text)}"
        for m in messages[lo:hi]
        if m is not messages[i] and m.session == here
    )


def _readable(text: str) -> str:
    """A neighbour's words as a memory's context, its pastes named rather than copied.

    A 900-line log copied in would be stored beside every memory next to it and swamp their
    vectors.
    """
    parts = split_pastes(text)
    if not parts.pastes:
        return text
    named = " ".join(f"[pasted {p.label()}]" for p in parts.pastes)
    return f"{parts.prose} {named}".strip()


def _neighbour(messages: list[Message], i: int, step: int) -> str | None:
    j = i + step
    if 0 <= j < len(messages) and messages[j].session == messages[i].session:
        return messages[j].text
    return None


def _provenance(message: Message, source: str) -> dict[str, Any]:
    provenance: dict[str, Any] = {
        "import": {"source": source, "index": message.index},
        "role": message.role,
    }
    if message.speaker:
        provenance["speaker"] = message.speaker
    if message.session:
        provenance["session"] = message.session
    if message.dia_id:
        provenance["dia_ids"] = [message.dia_id]
    return provenance


def to_memory(
    messages: list[Message],
    i: int,
    *,
    source: str,
    gated: bool,
    policy: GatePolicy,
    privacy: PrivacyFilter,
) -> tuple[NewMemory | None, str]:
    """The memory for message i (None when it is not stored) and the reason."""
    message = messages[i]
    provenance = _provenance(message, source)
    if not message.text.strip():
        return None, "empty message"
    if gated:
        decision = gate(
            message.text,
            role=message.role,
            policy=policy,
            privacy=privacy,
            context=_neighbour(messages, i, -1),
            reply=_neighbour(messages, i, 1),
        )
        if not decision.keep:
            return None, decision.reason.split(" (")[0]
        item = to_new_memory(
            decision,
            source=Source.CHAT,
            provenance=provenance,
            occurred_at=message.occurred_at,
            require_approval=False,
        )
    else:
        # --raw skips the gate's judgement of what is worth keeping, never its safety screen:
        # a high-risk secret is refused, and instruction-like text is dropped or kept only as
        # a low-trust episode, as the gate would.
        content, findings, verdict = screen(message.text, message.role, policy, privacy)
        if verdict is not None and not verdict.keep:
            return None, verdict.reason.split(" (")[0].split(";")[0]
        if verdict is not None:
            flagged = to_new_memory(
                verdict,
                source=Source.TOOL if message.role == "tool" else Source.CHAT,
                provenance=provenance,
                occurred_at=message.occurred_at,
                require_approval=False,
            )
            flagged.context = privacy.clean(_context(messages, i))
            return flagged, "stored"
        if not content:
            return None, "empty message"
        item = NewMemory(
            content=content,
            kind=MemoryKind.EPISODIC,
            source=Source.TOOL if message.role == "tool" else Source.CHAT,
            category=Category.FACT,
            importance=0.5,
            ttl_days=None,
            occurred_at=message.occurred_at,
            provenance={**provenance, "trust": "low" if message.role == "tool" else "normal"},
            tags=["pii-redacted"] if findings else [],
        )
    item.context = privacy.clean(_context(messages, i))
    return item, "stored"


def to_memories(
    messages: list[Message],
    i: int,
    *,
    source: str,
    gated: bool,
    policy: GatePolicy,
    privacy: PrivacyFilter,
) -> tuple[list[NewMemory], str]:
    """The memories for message i and the reason.

    One at most (`to_memory`); a gated message with pasted machine text makes its prose's
    memory and one account of the paste (`ingest.pastes`), never one per pasted line.
    """
    message = messages[i]
    parts = split_pastes(message.text) if gated else None
    if parts is None or not parts.pastes:
        item, reason = to_memory(
            messages, i, source=source, gated=gated, policy=policy, privacy=privacy
        )
        return ([item] if item else []), reason
    decided = []
    if parts.prose:
        prose = gate(
            parts.prose,
            role=message.role,
            policy=policy,
            privacy=privacy,
            context=_neighbour(messages, i, -1),
            reply=_neighbour(messages, i, 1),
        )
        decided.append((parts.prose, prose))
    pasted = paste_decision(parts, role=message.role, policy=policy, privacy=privacy)
    decided += [pasted] if pasted else []
    provenance = _provenance(message, source)
    context = privacy.clean(_context(messages, i))
    items = []
    for _, decision in bounded(decided, pasted=pasted is not None):
        if decision.keep:
            item = to_new_memory(
                decision,
                source=Source.TOOL if message.role == "tool" else Source.CHAT,
                provenance=provenance,
                occurred_at=message.occurred_at,
                require_approval=False,
            )
            item.context = context
            items.append(item)
    return items, "stored" if items else "machine text with nothing to keep"


def _batches(items: list[int], size: int) -> Iterator[list[int]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _gate_batch(
    messages: list[Message],
    batch: list[int],
    report: ImportReport,
    *,
    source: str,
    gated: bool,
    policy: GatePolicy,
    privacy: PrivacyFilter,
) -> list[NewMemory]:
    items = []
    for i in batch:
        made, reason = to_memories(
            messages, i, source=source, gated=gated, policy=policy, privacy=privacy
        )
        report.reasons[reason] = report.reasons.get(reason, 0) + 1
        if not made:
            report.dropped += 1
        items += made
    return items


async def _embed(store: MemoryStore, items: list[NewMemory]) -> tuple[Vectors, Vectors] | None:
    """Each memory's vector and own-text vector, in one embedding call (`embed_memories`)."""
    if not items:
        return None
    return await store.embed_memories(items)


def _without_split_secrets(messages: list[Message], privacy: PrivacyFilter) -> list[Message]:
    mine = [i for i, m in enumerate(messages) if m.role == "user"]
    cleaned = without_split_secrets([messages[i].text for i in mine], privacy)
    out = list(messages)
    for i, text in zip(mine, cleaned, strict=True):
        if text != out[i].text:
            out[i] = replace(out[i], text=text)
    return out


async def import_messages(
    store: MemoryStore,
    scope: Scope,
    messages: list[Message],
    *,
    source: str,
    gated: bool = True,
    batch_size: int = 256,
    policy: GatePolicy | None = None,
    privacy: PrivacyFilter | None = None,
    progress: Callable[[int], object] | None = None,
) -> ImportReport:
    """Import `messages` for one user, resuming after what an earlier run stored.

    Embedding is nearly all of an import's time, so it runs one batch ahead: while batch k is
    written to Postgres and Chroma, batch k+1 is gated and embedded in a worker thread. Writes
    stay in file order, one transaction per batch, which is what resuming relies on; a batch
    embedded but not yet written when the import stops is simply embedded again next time.
    """
    # The whole import is one writer: a forget of the user while it runs refuses every
    # later batch (`storage.tombstones`), instead of the import writing the user back.
    async with writer(store.pool, scope):
        started = time.perf_counter()
        policy, privacy = policy or GatePolicy(), privacy or PrivacyFilter()
        report = ImportReport(source=source, messages=len(messages))
        # A secret split across the user's messages ("the password for the NAS is" / the
        # value) is in no one message: joined as a thread's turns are, before any is read.
        messages = await asyncio.to_thread(_without_split_secrets, messages, privacy)
        done = await imported_up_to(store.pool, scope, source)
        todo = [i for i, m in enumerate(messages) if m.index > done]
        report.skipped_done = len(messages) - len(todo)
        if progress and report.skipped_done:
            progress(report.skipped_done)
        batches = list(_batches(todo, max(1, batch_size)))

        def prepare(
            batch: list[int],
        ) -> tuple[list[NewMemory], asyncio.Task[tuple[Vectors, Vectors] | None]]:
            items = _gate_batch(
                messages, batch, report, source=source, gated=gated, policy=policy, privacy=privacy
            )
            return items, asyncio.ensure_future(_embed(store, items))

        ahead = prepare(batches[0]) if batches else None
        k = 0
        try:
            while ahead is not None:
                items, embedding = ahead
                vectors = await embedding
                ahead = prepare(batches[k + 1]) if k + 1 < len(batches) else None
                if items and vectors is not None:
                    try:
                        await store.write_many(
                            scope, items, reason="import", vectors=vectors[0], own=vectors[1]
                        )
                    except Exception as exc:
                        if not is_forgotten(exc):
                            raise
                        raise UserForgottenError(
                            "import stopped: the user was forgotten while it ran (the "
                            f"{report.stored} memories stored before were deleted with them; "
                            "the rest were refused). Import again to start anew."
                        ) from exc
                    report.stored += len(items)
                if progress:
                    progress(len(batches[k]))
                k += 1
        finally:
            if ahead is not None and not ahead[1].done():
                ahead[1].cancel()
                await asyncio.gather(ahead[1], return_exceptions=True)
        if report.stored:
            # The planner's statistics would only catch up with autovacuum: until then a recall of
            # a user imported into a fresh or much smaller table is planned for a handful of rows.
            await analyze(store.pool)
        report.seconds = time.perf_counter() - started
        return report
