"""Shared memory between the agents of one tenant, in the agent graph.

Publishing: after a turn, what the gate kept from the user is published to the tenant's shared
memory only under an explicit rule of the operator's, `share_categories`, and under an agent
identity the operator configured, `agent_id` (both empty by default, so a user's private memory
never flows there on its own; under auth a run cannot set either, see `agent.run_context`).
Each such memory goes out on the agent bus as `knowledge_learned` (a task the agent marked
finished, under `completed_task`, as `task_completed`), which stores it in the tenant's shared
scope governed like any write: redacted again, refused when it carries secrets or instructions,
low trust (importance capped, short TTL, never an explicit preference) and conflict-resolved
against what other agents shared.

Recall: beside the user's own memories, the turn recalls a few of the tenant's shared ones,
labelled with the agent that published them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from agent.context import Context
from memory.gating.ingest import IngestResult
from memory.sharing.bus import AgentBus
from memory.sharing.events import SHARED_USER
from memory.storage.deletion_outbox import owner_digest
from memory.storage.forget import DERIVED_FROM
from memory.storage.forget_one import SOURCE_MEMORY
from memory.storage.store import MemoryStore
from memory.system import recaller
from memory.types import Scope
from memory.working.prompt_sections import EvidenceItem
from prompts.agent import SHARED_EVIDENCE_KIND

log = logging.getLogger(__name__)

PUBLISHED_ACTIONS = frozenset({"stored", "superseded", "merged"})
"""Outcomes that are new knowledge (a reinforced duplicate was shared, or not, before)."""


def agent_name(ctx: Context) -> str | None:
    """The agent's name on the bus, the operator's `agent_id`; None: this agent publishes nothing.

    Never a fallback such as the assistant id: what a user says reaches other users only under
    a name and rule an operator chose for this agent.
    """
    return ctx.agent_id.strip() or None


def shared_scope(scope: Scope) -> Scope:
    """The tenant's shared agent memory."""
    return Scope(scope.tenant_id, SHARED_USER)


async def publish_learned(
    store: MemoryStore,
    scope: Scope,
    ctx: Context,
    results: Sequence[IngestResult],
) -> list[str]:
    """Publish this turn's kept memories of the rule's categories; the shared memory ids."""
    allowed = set(ctx.share_categories)
    chosen = [
        r for r in results if r.action in PUBLISHED_ACTIONS and r.decision.category.value in allowed
    ]
    agent = agent_name(ctx)
    if not chosen or agent is None:
        return []
    bus = AgentBus(store)
    published: list[str] = []
    try:
        for result in chosen:
            event = await bus.publish(
                scope.tenant_id,
                agent,
                "knowledge_learned",
                {
                    "content": result.decision.content,
                    "category": result.decision.category.value,
                    DERIVED_FROM: owner_digest(scope),  # forgetting the user deletes the copy
                    # ... and deleting the memory (or scrubbing a secret from it) retracts it.
                    **({SOURCE_MEMORY: result.memory_id} if result.memory_id else {}),
                },
            )
            if event.memory_id:
                published.append(event.memory_id)
    finally:
        await bus.close()
    return published


async def publish_completed(
    store: MemoryStore,
    scope: Scope,
    ctx: Context,
    goal: str | None,
    outcome: str,
) -> str | None:
    """Publish a task the agent finished, under the `completed_task` rule; the memory id."""
    agent = agent_name(ctx)
    if "completed_task" not in ctx.share_categories or agent is None:
        return None
    content = f"Completed task: {goal or 'unnamed task'}. Outcome: {outcome}"
    bus = AgentBus(store)
    try:
        event = await bus.publish(
            scope.tenant_id,
            agent,
            "task_completed",
            {"content": content, "outcome": outcome, DERIVED_FROM: owner_digest(scope)},
        )
    finally:
        await bus.close()
    return event.memory_id


async def recall_shared(store: MemoryStore, scope: Scope, query: str, k: int) -> list[EvidenceItem]:
    """Up to `k` of the tenant's shared memories for `query`, labelled with their agent."""
    if k <= 0 or not query.strip():
        return []
    hits = await recaller(store).recall(shared_scope(scope), query, k=k, record_access=False)
    return [
        EvidenceItem(
            id=h.record.id,
            date=h.record.occurred_at.date().isoformat(),
            kind=SHARED_EVIDENCE_KIND.format(
                kind=h.record.kind.value, agent=_agent_of(h.record.provenance)
            ),
            content=h.record.content,
            score=round(h.score, 4),
        )
        for h in hits
    ]


def _agent_of(provenance: dict[str, Any]) -> str:
    return str(provenance.get("agent_id") or "unknown")
