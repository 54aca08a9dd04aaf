"""The built-in memory-only responder: the zero-key default when no chat model is configured.

It is a LangChain chat model, so the graph runs unchanged (perceive, recall, compose,
gate_and_store and consolidation all run for real) and its reply streams like any model's. It
does not generate language: it reports the memories recall returned for this turn (those that
passed the relevance floor) and those long-term preferences that share a content word with the
message, under one short label that says so.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from pydantic import Field

from memory.citations import neutralise
from memory.gating.rules.signals import is_interrogative
from memory.recall.relevance import content_terms
from memory.working.prompt_sections import EvidenceItem, PrefItem, short_id
from prompts import agent as text

# Recalled memories are the user's own text; one line each keeps the reply readable.
_MAX_LINE_CHARS = 400


def _line(value: str) -> str:
    # The reply joins the thread's history: a memory's forged "[MEM:…" would read as a citation.
    flat = neutralise(" ".join(str(value).split()))
    return flat if len(flat) <= _MAX_LINE_CHARS else flat[: _MAX_LINE_CHARS - 1] + "…"


# "What do I like?", "where do I live?", "what's my ...", "我喜欢什么": a question about the user,
# who may be asking for the profile itself in none of its words ("how do I sort a list?" is not).
_ABOUT_ME = re.compile(
    r"\b(?:what|which|who|where|when)\b[^?.!]{0,30}?\b(?:do|did|am|was|have|had) i\b"
    r"|^(?:do|did|am|have) i\b|\b(?:my|mine)\b|我[^。？?！!]{0,8}?(?:什么|吗|哪|谁|几)",
    re.IGNORECASE,
)


def relevant_preferences(message: str, preferences: Sequence[PrefItem]) -> list[PrefItem]:
    """The preferences that bear on `message`.

    All of them for a question about the user; else those that share a content word
    (stemmed; bigrams in Chinese) with it.
    The whole profile under every reply ("Your long-term preferences" under "what's the
    capital of France?") buried what was recalled; a preference the message does not touch
    is for a model's prompt, not for this reply.
    """
    if is_interrogative(message[:2000]) and _ABOUT_ME.search(message[:2000]):
        return list(preferences)
    asked = content_terms(message)
    return [p for p in preferences if asked & content_terms(f"{p['key']} {p['value']}")]


def memory_only_reply(evidence: Sequence[EvidenceItem], preferences: Sequence[PrefItem]) -> str:
    """The labelled reply for what recall returned (`preferences` already chosen)."""
    parts = [text.MEMORY_ONLY_LABEL]
    if evidence:
        parts.append(text.MEMORY_ONLY_EVIDENCE_HEADER)
        parts.extend(
            f"- [mem:{short_id(e['id'])} · {str(e['date'])[:10]} · {e['kind']}] "
            f"{_line(e['content'])}"
            for e in evidence
        )
    if preferences:
        parts.append(text.MEMORY_ONLY_PREFERENCES_HEADER)
        parts.extend(f"- {_line(p['key'])}: {_line(p['value'])}" for p in preferences)
    if not evidence and not preferences:
        parts.append(text.MEMORY_ONLY_NOTHING)
    return "\n".join(parts)


class MemoryOnlyChatModel(BaseChatModel):
    """Answers with the memories recalled for this turn (set per turn), never with a model."""

    evidence: list[EvidenceItem] = Field(default_factory=list)
    preferences: list[PrefItem] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "memory-only"

    def with_recall(
        self, evidence: Sequence[EvidenceItem], preferences: Sequence[PrefItem]
    ) -> MemoryOnlyChatModel:
        """A copy that answers from this turn's recall."""
        return MemoryOnlyChatModel(evidence=list(evidence), preferences=list(preferences))

    def bind_tools(
        self, tools: Sequence[Any], **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """It never calls tools: binding them changes nothing."""
        return self

    def _reply(self, messages: Sequence[BaseMessage] = ()) -> str:
        asked = next((m.text for m in reversed(messages) if isinstance(m, HumanMessage)), "")
        return memory_only_reply(self.evidence, relevant_preferences(asked, self.preferences))

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        reply = AIMessage(content=self._reply(messages))
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def _chunks(self, messages: Sequence[BaseMessage]) -> Iterator[str]:
        # Line by line: a terminal or Studio shows the reply as it streams.
        lines = self._reply(messages).split("\n")
        for i, line in enumerate(lines):
            yield line + ("\n" if i < len(lines) - 1 else "")

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for piece in self._chunks(messages):
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
            if run_manager:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        for piece in self._chunks(messages):
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
            if run_manager:
                await run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk
