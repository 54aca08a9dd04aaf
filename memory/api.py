"""The memory system for an agent of your own: open it, recall, remember a turn, forget.

This template's graph is one user of the memory; a `create_agent` agent or a `StateGraph` of
your own is another. `GovernedMemory.open()` opens the same stores the template uses
(embedded Postgres and Chroma unless `DATABASE_URL` / `CHROMA_URL` are set) and every write
takes the same governed path: consent, the gate, redaction, the poisoning screen, dedupe,
conflicts, audit and the forget-me tombstone. Recall returns only what passes the relevance
floor, each with its score breakdown and a citation the composer would use.

    async with GovernedMemory.open() as memory:
        hits = await memory.recall("alice", "what do I drink?")
        await memory.remember_turn("alice", "I switched to green tea.", reply="Noted!")

The user is always an argument: take it from your runtime (the authenticated user, the run's
config or context), never from text a model wrote.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

from memory.gating.ingest import IngestResult, ingest_text
from memory.recall.recaller import Recaller
from memory.settings import Settings, apply_privacy_defaults
from memory.storage.forget_one import delete_memory
from memory.storage.store import MemoryStore, open_store
from memory.system import recaller
from memory.types import MemoryRecord, Scope, ScoredMemory, Source
from memory.working.prompt_sections import short_id


@dataclass(frozen=True, slots=True)
class Recalled:
    """One recalled memory: its text, why it ranked where it did, and how to cite it."""

    id: str
    content: str
    kind: str
    score: float
    breakdown: dict[str, float]
    relevance: str
    citation: str
    """`[mem:xxxxxxxx]`: the form the template's prompts cite memories in."""
    occurred_at: str
    valid_to: str | None = None
    """Set on a value an update replaced (recalled for a question about the past): held until."""

    @classmethod
    def of(cls, hit: ScoredMemory) -> Recalled:
        """From a recall hit."""
        rel = hit.breakdown.relevance
        return cls(
            id=hit.record.id,
            content=hit.record.content,
            kind=hit.record.kind.value,
            score=hit.score,
            breakdown=hit.breakdown.as_dict(),
            relevance=rel.reason if rel is not None else "",
            citation=f"[mem:{short_id(hit.record.id)}]",
            occurred_at=hit.record.occurred_at.isoformat(),
            valid_to=hit.record.valid_to.isoformat() if hit.record.valid_to else None,
        )


@dataclass(frozen=True, slots=True)
class Written:
    """What the governed write path did with one statement."""

    action: str
    """stored, reinforced, superseded, dropped, pending_approval, ..."""
    memory_id: str | None
    content: str
    """The text as stored: redacted."""
    reason: str

    @classmethod
    def of(cls, result: IngestResult) -> Written:
        """From the write path's result."""
        return cls(result.action, result.memory_id, result.decision.content, result.reason)


class GovernedMemory:
    """One tenant's governed memory, open for the lifetime of an `async with` block."""

    def __init__(self, store: MemoryStore, tenant: str) -> None:
        """Wrap an open `MemoryStore`; most programs use `GovernedMemory.open()` instead."""
        self.store = store
        self.tenant = tenant
        self._recaller: Recaller = recaller(store)

    @classmethod
    @asynccontextmanager
    async def open(
        cls, settings: Settings | None = None, *, tenant: str | None = None
    ) -> AsyncIterator[GovernedMemory]:
        """Open the stores (from the environment unless `settings` is given) and close them."""
        apply_privacy_defaults()
        settings = settings or Settings.from_env()
        async with open_store(settings) as store:
            yield cls(store, tenant or settings.default_tenant)

    def scope(self, user: str) -> Scope:
        """The scope of `user` in this tenant (ScopeError for an id that cannot be one)."""
        return Scope(self.tenant, user)

    async def recall(self, user: str, query: str, *, k: int = 6) -> list[Recalled]:
        """The memories of `user` relevant to `query`, best first; nothing when none is."""
        hits = await self._recaller.recall(self.scope(user), query, k=k)
        return [Recalled.of(h) for h in hits]

    async def remember(self, user: str, text: str) -> list[Written]:
        """Keep what the user asked to be kept (an explicit request: small talk still drops)."""
        results = await ingest_text(
            self.store, self.scope(user), text, role="user", source=Source.CHAT,
            provenance={"via": "api"}, require_approval=False, explicit=True,
        )  # fmt: skip
        return [Written.of(r) for r in results]

    async def remember_turn(
        self,
        user: str,
        message: str,
        *,
        reply: str | None = None,
        previous: str | None = None,
        require_approval: bool = True,
    ) -> list[Written]:
        """Gate and store what a user's message is worth keeping, as the template's graph does.

        `previous` is the agent's message the user answered and `reply` the answer the
        message got: the gate reads both for context. Memories that would act for the user
        (money, deletion, credentials, sending in their name) wait as `pending_approval`
        unless `require_approval` is False.
        """
        results = await ingest_text(
            self.store, self.scope(user), message, role="user", context=previous, reply=reply,
            source=Source.CHAT, provenance={"via": "api"}, require_approval=require_approval,
        )  # fmt: skip
        return [Written.of(r) for r in results]

    async def forget(self, user: str, memory_id: str) -> bool:
        """Delete one memory everywhere it went (a short id works); False if there was none."""
        scope = self.scope(user)
        receipt = await delete_memory(
            self.store, scope, await self.store.resolve_id(scope, memory_id), reason="via api"
        )
        return bool(receipt.get("memories"))

    async def list(self, user: str, *, limit: int = 50) -> list[MemoryRecord]:
        """The active memories of `user`, newest first."""
        return await self.store.list_memories(self.scope(user), limit=limit)


def cite(hits: Sequence[Recalled]) -> str:
    """Recalled memories as prompt lines, each with its citation (for a model's context)."""
    return "\n".join(f"- {h.citation} {h.content}" for h in hits)


__all__ = ["GovernedMemory", "Recalled", "Written", "cite"]
