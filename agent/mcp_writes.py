"""MCP writes: answered at once with an id, judged by the governed write path in the background.

A `remember` call redacts the text (so no secret is ever queued), records it in
`pending_writes` under the user's current forget epoch, starts the governed write
(`memory.gating.ingest.ingest_text`: gate, model gate when configured, poisoning screen,
conflicts, audit) and waits at most `ANSWER_WITHIN_S` for it. A fast write answers with its
outcome; a slow one (a model-backed gate) answers "pending" and finishes on its own. The row is
the promise: if the process stops before the write finishes, the next process to run
`resume()` claims it once its lease has run out and finishes it. `write_status` reads the row.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from memory.gating.ingest import ingest_text
from memory.gating.privacy import PrivacyFilter
from memory.storage import pending_writes
from memory.storage.pending_writes import PendingWrite
from memory.storage.store import MemoryStore
from memory.storage.tombstones import current_epoch, is_forgotten, writing_as
from memory.types import Scope, Source

log = logging.getLogger(__name__)

ANSWER_WITHIN_S = 0.02
"""How long `remember` waits for the write itself before answering "pending": the whole answer,
redaction, two queries and the transport included, must stay within 100 ms."""

RESUME_EVERY_S = 15.0
"""How often a server looks for writes another process accepted and did not finish."""

MAX_TEXT_CHARS = 8_000
"""The longest text one `remember` takes: a statement to keep, not a document."""

GATE_MODEL_ENV = "MEMORY_GATE_MODEL"


def gate_model_spec() -> str:
    """The operator's gate model for MCP writes ('provider:model'; empty = rules only)."""
    return os.environ.get(GATE_MODEL_ENV, "").strip()


def outcome(results: list[Any]) -> dict[str, Any]:
    """What the governed write made of the text: one entry per candidate statement."""
    return {
        "memories": [
            {
                "action": r.action,
                "memory_id": r.memory_id,
                "reason": r.reason,
                "category": r.decision.category.value,
                "kind": r.decision.kind.value,
                "content": r.decision.content,
            }
            for r in results
        ]
    }


class WriteRunner:
    """Accepts writes, runs them in the background, and finishes those a stopped process left."""

    def __init__(self, get_store: Callable[[], Awaitable[MemoryStore]], gate_model: str) -> None:
        """Writes go to the store `get_store` opens, gated by `gate_model` when one is named."""
        self._get_store = get_store
        self._gate_model_spec = gate_model
        self._gate_model: Any = None
        self._privacy = PrivacyFilter()
        self._running: dict[str, asyncio.Task[None]] = {}

    async def _model(self) -> Any:
        if self._gate_model_spec and self._gate_model is None:
            from agent.model import load_chat_model

            # In a thread: importing a provider's package takes about a second, which on the
            # loop would hold up every `remember` answer waiting meanwhile.
            self._gate_model = await asyncio.to_thread(load_chat_model, self._gate_model_spec)
        return self._gate_model

    async def warm(self) -> None:
        """Open the store, load the gate model and compile the redaction patterns now.

        The first `remember` then pays for none of them.
        """
        await self._get_store()
        await self._model()
        await asyncio.to_thread(self._privacy.redact, "warm up")

    async def submit(self, scope: Scope, text: str, *, via: str) -> PendingWrite:
        """Accept `text` for `scope`; the row as it stands after at most `ANSWER_WITHIN_S`."""
        store = await self._get_store()
        # Redaction reads every pattern over up to 8,000 characters: off the event loop.
        redacted = (await asyncio.to_thread(self._privacy.redact, text)).text
        epoch = await current_epoch(store.pool, scope)
        write = await pending_writes.accept(store.pool, scope, redacted, via=via, epoch=epoch)
        task = self._start(write)
        if not self._gate_model_spec:  # a model call takes longer than the whole budget
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(task), ANSWER_WITHIN_S)
        if not task.done():
            return write
        return await pending_writes.get(store.pool, scope, write.id) or write

    def _start(self, write: PendingWrite) -> asyncio.Task[None]:
        task = asyncio.create_task(self._run(write), name=f"mcp-write-{write.id}")
        self._running[write.id] = task
        task.add_done_callback(lambda _: self._running.pop(write.id, None))
        return task

    async def _run(self, write: PendingWrite) -> None:
        store = await self._get_store()
        heartbeat = asyncio.create_task(self._renew(store, write.id))
        try:
            await self._ingest(store, write)
        finally:
            heartbeat.cancel()

    async def _renew(self, store: MemoryStore, write_id: str) -> None:
        while True:
            await asyncio.sleep(pending_writes.LEASE_S / 3)
            with contextlib.suppress(Exception):  # a missed renewal only lets another help out
                await pending_writes.renew(store.pool, write_id)

    async def _ingest(self, store: MemoryStore, write: PendingWrite) -> None:
        try:
            # The epoch of acceptance: a forget since then refuses this write (LMF01).
            with writing_as(write.scope, write.epoch):
                results = await ingest_text(
                    store,
                    write.scope,
                    write.text or "",
                    role="user",
                    source=Source.CHAT,
                    provenance={"via": write.via, "write_id": write.id},
                    gate_model=await self._model(),
                    require_approval=False,
                    # Rules only: a client asking to keep this is taken at its word (unless the
                    # screen refuses it). With a gate model, the model judges it, as on a turn.
                    explicit=not self._gate_model_spec,
                )
        except Exception as exc:
            if is_forgotten(exc):
                await pending_writes.finish(
                    store.pool, write.id, "failed", {"reason": "the user was forgotten"}
                )
                return
            # Left pending: its lease runs out and `resume` tries again (a database outage).
            log.warning("MCP write %s not finished, will retry: %s", write.id, type(exc).__name__)
            return
        await pending_writes.finish(store.pool, write.id, "done", outcome(results))

    async def resume(self) -> int:
        """Start every accepted write whose worker stopped; how many were started."""
        store = await self._get_store()
        stale = await pending_writes.claim_stale(store.pool)
        for write in stale:
            if write.id not in self._running:
                self._start(write)
        return len(stale)

    async def drain(self) -> None:
        """Wait for the writes this process is running (closing a stdio session)."""
        if self._running:
            await asyncio.gather(*self._running.values(), return_exceptions=True)

    @contextlib.asynccontextmanager
    async def resuming(self) -> AsyncIterator[None]:
        """While open, finish what stopped processes left, now and every `RESUME_EVERY_S`."""

        async def loop() -> None:
            with contextlib.suppress(Exception):  # a failure here shows again on first use
                await self.warm()
            while True:
                try:
                    await self.resume()
                except Exception as exc:  # the database may be down; try again next round
                    log.warning("resuming MCP writes failed: %s", type(exc).__name__)
                await asyncio.sleep(RESUME_EVERY_S)

        task = asyncio.create_task(loop(), name="mcp-write-resume")
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


__all__ = ["ANSWER_WITHIN_S", "MAX_TEXT_CHARS", "WriteRunner", "gate_model_spec", "outcome"]
