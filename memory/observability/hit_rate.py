"""Hit rate: the share of memories injected into the prompt that the answer used.

A memory counts as used when the answer cites it (`[mem:ab12cd34]`, the id format of the
evidence section) or repeats most of its content words. The agent records, per turn, an audit
event `injection` with `{"injected": [ids], "used": [ids]}`; `metrics` sums them. The rate
tells whether injecting memories earns its prompt space.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from memory.recall.lexical import tokenize
from memory.storage.store import MemoryStore
from memory.types import MemoryRecord, Scope, ScoredMemory
from memory.working.prompt_sections import short_id

Evidence = ScoredMemory | MemoryRecord | Mapping[str, Any]

_CITATION = re.compile(r"\[mem:\s*([0-9a-fA-F]{6,32})")


def _id_and_content(item: Evidence) -> tuple[str, str]:
    if isinstance(item, ScoredMemory):
        return item.record.id, item.record.content
    if isinstance(item, MemoryRecord):
        return item.id, item.content
    return str(item["id"]), str(item.get("content", ""))


def _cited(memory_id: str, citations: set[str]) -> bool:
    full = memory_id.replace("-", "").lower()
    return short_id(memory_id).lower() in citations or any(full.startswith(c) for c in citations)


def _overlaps(content: str, answer_tokens: set[str], min_share: float, min_shared: int) -> bool:
    words = set(tokenize(content))
    if not words:
        return False
    shared = len(words & answer_tokens)
    return shared >= min_shared and shared / len(words) >= min_share


def used_memory_ids(
    answer_text: str,
    evidence: Sequence[Evidence],
    *,
    min_share: float = 0.6,
    min_shared: int = 2,
) -> list[str]:
    """Ids of the `evidence` memories the answer used, in evidence order.

    Used means cited by id, or at least `min_shared` of the memory's content words (stemmed,
    stopwords dropped) and a share `min_share` of them appear in the answer. The bar is high on
    purpose: a false "used" inflates the hit rate that justifies injecting memories at all.
    """
    citations = {c.lower() for c in _CITATION.findall(answer_text)}
    answer_tokens = set(tokenize(answer_text))
    used: list[str] = []
    for item in evidence:
        memory_id, content = _id_and_content(item)
        if memory_id in used:
            continue
        if _cited(memory_id, citations) or _overlaps(content, answer_tokens, min_share, min_shared):
            used.append(memory_id)
    return used


async def record_injection(
    store: MemoryStore, scope: Scope, injected: Sequence[str], used: Sequence[str]
) -> None:
    """Log one turn's injected and used memory ids (the input of the hit-rate metric)."""
    detail = {"injected": list(dict.fromkeys(injected)), "used": list(dict.fromkeys(used))}
    await store.record_event(scope, None, "injection", "memories injected into the prompt", detail)
