"""Working memory persistence: an `AsyncPostgresSaver` on the same database as the memories.

Used by `langgraph dev` / LangGraph Platform through `langgraph.json` (`checkpointer.path`) and by
the CLI, so a thread's working memory (turns, summary, task state, scratchpad) survives restarts.

What it writes is governed like the memories are:

- **Redacted.** Every value passes through the privacy filter before it is serialised (message
  text, tool calls, summaries, inline strings, checkpoint metadata), so no card number, password,
  key or token the user typed lands in `checkpoints`, `checkpoint_blobs` or `checkpoint_writes`,
  whichever way it entered the state (a run's input, a state update, a tool's output).
- **Encrypted at rest** when `MEMORY_CHECKPOINT_KEY` is set: blobs and writes are sealed with
  AES-256-GCM (LangGraph's `EncryptedSerializer` with a `cryptography` cipher). Checkpoints
  written before the key was set still load; the key cannot be dropped once data is sealed.
- **Clear when the database is down.** A lost connection raises `MemoryStoreUnavailable`
  ("memory store unavailable ... retry shortly") instead of a bare driver error.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import os
import time
import weakref
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, cast

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.serde.base import CipherProtocol, SerializerProtocol
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from memory.gating.privacy.deep import StructureRedactor
from memory.settings import Settings, apply_privacy_defaults
from memory.storage.availability import is_unavailable, unavailable_from
from memory.storage.checkpoint_runs import DELETE_RUNS_SQL, RUN_INDEX_SQL
from memory.storage.pg import database_url, release_embedded_databases
from memory.storage.threads import RECORDS_PRESENT_SQL, UNRECORD_THREAD_SQL
from memory.storage.tombstones import ATTACH_CHECKPOINT_GUARDS_SQL

KEY_ENV = "MEMORY_CHECKPOINT_KEY"
# How long a step waits for a connection before the run fails as "memory store unavailable":
# the pool's default (30 s) kept a client waiting half a minute for the same answer.
_CHECKOUT_TIMEOUT_S = 10.0
_CIPHER_NAME = "aesgcm"
# Inline checkpoint strings up to this many characters are redacted on the event loop.
_INLINE_ON_LOOP_CHARS = 2_000
_NONCE_BYTES = 12  # GCM's standard nonce; random per blob (2^-32 collision odds after 2^32 blobs)
# A connection back in the pool for less than this is handed out without the pool's liveness
# round trip. A turn checks out a connection about 14 times (a read, then a write per step)
# and each check cost one more round trip to Postgres; the first use of a connection after a
# pause is still checked. A connection that died within the window (a restart) fails its
# statement instead, and the saver then drops every broken connection and retries once.
_RECHECK_AFTER_S = 2.0


class CheckpointKeyError(ValueError):
    """`MEMORY_CHECKPOINT_KEY` is not a usable AES key."""


def parse_key(raw: str) -> bytes:
    """A 16, 24 or 32-byte AES key from base64 (standard or URL-safe) or hex text."""
    text = raw.strip()
    candidates: list[bytes] = []
    if len(text) in (32, 48, 64):
        with contextlib.suppress(ValueError):
            candidates.append(bytes.fromhex(text))
    for decode in (base64.urlsafe_b64decode, base64.b64decode):
        try:
            candidates.append(decode(text + "=" * (-len(text) % 4)))
        except (binascii.Error, ValueError):
            continue
    for key in candidates:
        if len(key) in (16, 24, 32):
            return key
    raise CheckpointKeyError(
        f"{KEY_ENV} must be a 16, 24 or 32-byte key in base64 or hex; make one with: "
        'python -c "import base64,os; print(base64.urlsafe_b64encode(os.urandom(32)).decode())"'
    )


class AesGcmCipher(CipherProtocol):
    """AES-GCM: confidentiality and integrity (a tampered blob fails to load, loudly)."""

    def __init__(self, key: bytes) -> None:
        """Seal with `key` (16, 24 or 32 bytes)."""
        self._aead = AESGCM(key)

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        """A fresh random nonce, then the ciphertext with its tag."""
        nonce = os.urandom(_NONCE_BYTES)
        return _CIPHER_NAME, nonce + self._aead.encrypt(nonce, plaintext, None)

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        """Open a blob sealed by `encrypt`; a wrong key or a tampered blob raises."""
        if ciphername != _CIPHER_NAME:
            raise CheckpointKeyError(f"checkpoint sealed with unknown cipher {ciphername!r}")
        nonce, sealed = ciphertext[:_NONCE_BYTES], ciphertext[_NONCE_BYTES:]
        try:
            return self._aead.decrypt(nonce, sealed, None)
        except InvalidTag:
            raise CheckpointKeyError(
                f"a checkpoint cannot be decrypted: {KEY_ENV} is not the key it was sealed with"
            ) from None


class RedactingSerializer(SerializerProtocol):
    """Redacts a value's free text, then hands it to `inner` (plain or encrypting)."""

    def __init__(self, inner: SerializerProtocol, redactor: StructureRedactor | None = None):
        """Wrap `inner`; `redactor` defaults to the built-in privacy rules."""
        self.inner = inner
        self.redactor = redactor or StructureRedactor()

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Serialise the redacted copy of `obj`."""
        return self.inner.dumps_typed(self.redactor.value(obj))

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Load as stored (already redacted when written)."""
        return self.inner.loads_typed(data)


def checkpoint_serializer(base: SerializerProtocol, key: str | None = None) -> RedactingSerializer:
    """`base` wrapped to redact, and to encrypt when a key is given (or `KEY_ENV` is set)."""
    raw = key if key is not None else os.environ.get(KEY_ENV, "").strip()
    inner: SerializerProtocol = base
    if raw:
        inner = EncryptedSerializer(AesGcmCipher(parse_key(raw)), base)
    return RedactingSerializer(inner)


def _text_chars(value: object, limit: int) -> int:
    """Characters of text in `value` (strings in dicts, lists, tuples; one per other item).

    Counting stops once past `limit`: a small value is measured in microseconds and a huge or
    deep one costs about `limit` steps, so the caller can decide where to process it.
    """
    total, stack = 0, [value]
    while stack and total <= limit:
        item = stack.pop()
        total += len(item) if isinstance(item, str) else 1
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return total


class _RecentUse:
    """The pool's `check` and `reset` callbacks: check a connection only after a pause."""

    def __init__(self) -> None:
        """No connection returned yet."""
        self._returned: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()

    async def check(self, conn: Any) -> None:
        """Raise if `conn` is dead; skipped when it came back moments ago."""
        returned = self._returned.pop(conn, None)
        if returned is None or time.monotonic() - returned > _RECHECK_AFTER_S:
            await AsyncConnectionPool.check_connection(conn)

    async def reset(self, conn: Any) -> None:
        """Remember when `conn` came back (it worked until then)."""
        self._returned[conn] = time.monotonic()


class GovernedPostgresSaver(AsyncPostgresSaver):
    """`AsyncPostgresSaver` that redacts inline values and reports an outage clearly."""

    serde: RedactingSerializer

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save a checkpoint; strings kept inline (not in blobs) are redacted here."""
        # Run metadata comes from the client, so it counts towards the size like the values.
        values = checkpoint["channel_values"].values()
        inline = sum(len(v) for v in values if isinstance(v, str))
        inline += _text_chars(metadata, _INLINE_ON_LOOP_CHARS)
        if inline <= _INLINE_ON_LOOP_CHARS:
            # A few short values (a flag, a turn kind) and the metadata: microseconds with the
            # redactor's cache, less than the hop to a worker thread (0.5-2.5 ms queued under
            # load, seven times a turn).
            sealed, meta = self._redact_inline(checkpoint, metadata)
        else:  # in a worker thread, as the saver serialises blobs: CPU work on user text
            sealed, meta = await asyncio.to_thread(self._redact_inline, checkpoint, metadata)
        saved: RunnableConfig = await self._guard(super().aput, config, sealed, meta, new_versions)
        return saved

    def _redact_inline(
        self, checkpoint: Checkpoint, metadata: CheckpointMetadata
    ) -> tuple[Checkpoint, CheckpointMetadata]:
        redactor = self.serde.redactor
        values = {
            k: redactor.text(v) if isinstance(v, str) else v
            for k, v in checkpoint["channel_values"].items()
        }
        meta: CheckpointMetadata = redactor.value(metadata)
        return {**checkpoint, "channel_values": values}, meta

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Save a node's pending writes (serialised, so redacted, by `serde`)."""
        await self._guard(super().aput_writes, config, writes, task_id, task_path)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Load a checkpoint."""
        result: CheckpointTuple | None = await self._guard(super().aget_tuple, config)
        return result

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete a thread's checkpoints, and every user's record of it (`user_threads`).

        The id is free again once the thread is gone, and another user may create a thread
        with it: a record left behind would name the new owner's thread as the old owner's,
        for their forget to delete.
        """
        await self._guard(super().adelete_thread, thread_id)
        await self._guard(self._unrecord, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete runs' checkpoints, their pending writes and the values only they held.

        The thread and its other runs stay (`storage.checkpoint_runs`). The server calls it
        when a client deletes a run and when a rollback cancels one; the auth handler has
        checked that the run is on the caller's thread.
        """
        ids = [str(r) for r in run_ids]
        if ids:
            await self._guard(self._delete_runs, ids)

    async def _delete_runs(self, run_ids: list[str]) -> None:
        async with self._cursor() as cur:
            await cur.execute(DELETE_RUNS_SQL, (run_ids, run_ids))

    async def _unrecord(self, thread_id: str) -> None:
        async with self._cursor() as cur:
            # Absent until the memory store's migrations ran (a checkpointer used alone).
            await cur.execute(RECORDS_PRESENT_SQL)
            row = await cur.fetchone()
            present = row["present"] if isinstance(row, dict) else bool(row and row[0])
            if present:
                await cur.execute(UNRECORD_THREAD_SQL, (str(thread_id),))

    async def _guard(self, call: Callable[..., Any], *args: Any) -> Any:
        """Run one read or write; an outage is reported as `MemoryStoreUnavailable`.

        A connection that died while it sat in the pool (a database restart) was handed out
        unchecked if it had been used moments before: the pool then drops every broken
        connection and the call runs once more. Every call here is safe to repeat (reads, and
        writes that upsert by their keys). Not when no connection could be had at all: that
        already waited for the pool's timeout.
        """
        try:
            return await call(*args)
        except Exception as exc:
            if not is_unavailable(exc):
                raise
            if isinstance(exc, PoolTimeout) or not isinstance(self.conn, AsyncConnectionPool):
                raise unavailable_from(exc) from exc
        try:
            await self.conn.check()
            return await call(*args)
        except Exception as exc:
            if is_unavailable(exc):
                raise unavailable_from(exc) from exc
            raise


async def guard_checkpoints(pool: AsyncConnectionPool[Any]) -> None:
    """Attach the forget guard to the checkpoint tables LangGraph created; index them by run.

    Under the migrations' lock, so two processes starting at once attach it once; the guard
    (`tombstones`) is skipped when the memory schema is not there yet (the store's migrations
    attach it then); the run index is `checkpoint_runs`'.
    """
    async with pool.connection() as conn:
        await conn.execute(ATTACH_CHECKPOINT_GUARDS_SQL)
        await conn.execute(RUN_INDEX_SQL)


@asynccontextmanager
async def open_checkpointer(
    settings: Settings | None = None, *, max_size: int = 10
) -> AsyncIterator[GovernedPostgresSaver]:
    """A set-up Postgres checkpointer on a connection pool, closed on exit."""
    apply_privacy_defaults()
    settings = settings or Settings.from_env()
    url = await asyncio.to_thread(database_url, settings)
    # autocommit + prepare_threshold=0: what the saver expects, and safe behind pgbouncer.
    kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    # The check replaces connections a database restart killed, so the first turn after an
    # outage does not fail on a dead socket; a connection used moments ago skips it (see
    # `_RECHECK_AFTER_S`), and the saver retries a call that met a dead one anyway.
    recent = _RecentUse()
    async with AsyncConnectionPool(
        url,
        min_size=1,
        max_size=max_size,
        kwargs=kwargs,
        open=False,
        check=recent.check,
        reset=recent.reset,
        timeout=_CHECKOUT_TIMEOUT_S,
    ) as pool:
        saver = GovernedPostgresSaver(pool)
        saver.serde = checkpoint_serializer(saver.serde)
        # The saver runs every statement behind one process-wide asyncio.Lock, which a single
        # shared connection needs; over a pool it queues all concurrent turns' checkpoint I/O
        # behind each other (50 concurrent turns: ~1.2 s per write, most of a turn's 2.4 s
        # overhead). A semaphore of the pool's size lets each write use its own connection.
        saver.lock = cast(asyncio.Lock, asyncio.Semaphore(max_size))
        await saver.setup()
        await guard_checkpoints(pool)
        yield saver


@asynccontextmanager
async def make_checkpointer() -> AsyncIterator[GovernedPostgresSaver]:
    """Entry point named in `langgraph.json` (`checkpointer.path`): lives as long as the server.

    When the server stops, the memory stores its runs opened are closed and its handle on the
    embedded PostgreSQL is released, so the database stops with the last process that uses it
    instead of outliving `langgraph dev`.
    """
    from agent.resources import close_all_stores

    try:
        async with open_checkpointer() as saver:
            yield saver
    finally:
        try:
            await close_all_stores()
        finally:
            await asyncio.to_thread(release_embedded_databases)
