"""A LangChain retriever over one user's governed recall.

Existing chains and retrieval tools meet the memory here: `invoke(query)` returns the user's
memories that pass the relevance floor (an off-topic query returns none), as `Document`s whose
metadata carries the memory id, its citation, kind, score and score breakdown.
"""

from __future__ import annotations

from dataclasses import asdict

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from memory.api import GovernedMemory


class MemoryRetriever(BaseRetriever):
    """The governed recall of one user, fixed when the retriever is made (never per query)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: GovernedMemory
    """The open memory (`GovernedMemory.open()`)."""
    user: str
    """Whose memories: from your runtime's identity, never from model output."""
    k: int = 6

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        hits = await self.memory.recall(self.user, query, k=self.k)
        return [
            Document(
                page_content=h.content,
                id=h.id,
                metadata={k: v for k, v in asdict(h).items() if k != "content"},
            )
            for h in hits
        ]

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        # The stores are asyncio clients bound to their event loop: use `ainvoke`.
        raise NotImplementedError(
            "MemoryRetriever is async: call ainvoke / use it in an async chain"
        )


__all__ = ["MemoryRetriever"]
