"""gate_and_store: write back only what the memory gate lets through, never the raw turn.

Redacted first. Also refreshes the rolling summary after the reply (off the hot path of the answer).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.runtime import Runtime

from agent.context import Context
from agent.identity import resolve_scope
from agent.images import scrub_originals, store_images
from agent.model import is_memory_only, load_chat_model
from agent.nodes.respond import MODEL_ERROR, this_turn
from agent.resources import get_store
from agent.shared_memory import publish_completed, publish_learned
from agent.split_secrets import scrub_again
from agent.state import GateRecord, State
from memory.gating.ingest import IngestResult, ingest_text
from memory.multimodal import text_parts
from memory.observability.hit_rate import record_injection, used_memory_ids
from memory.storage.store import MemoryStore
from memory.storage.tombstones import current_epoch, is_forgotten, writing_as
from memory.types import Scope, Source, Status
from memory.working.summary import refresh_summary
from memory.working.task_state import new_task_state, record_outcome
from memory.working.task_tools import finished_outcome
from memory.working.turns import start_of_last_turns, summary_matches

log = logging.getLogger(__name__)

SUMMARY_BATCH_MESSAGES = 4


def _record(result: IngestResult) -> GateRecord:
    return GateRecord(
        action=result.action,
        category=result.decision.category.value,
        kind=result.decision.kind.value,
        importance=round(result.decision.importance, 3),
        reason=result.reason,
        memory_id=result.memory_id,
    )


MAX_CATCH_UP = 10
"""At most this many ungated messages are gated in one turn (an old thread's first catch-up)."""


def ungated_humans(state: State) -> list[HumanMessage]:
    """The human messages the gate has not seen yet, oldest first.

    A turn interrupted after its message was recorded (the database down, the server killed)
    never reached the gate; the watermark (`gated_upto`, the id of the newest gated human
    message) makes the next turn gate it too. A thread written before the watermark existed
    has gate records but no watermark: only its newest message is new.
    """
    humans = [m for m in state["messages"] if isinstance(m, HumanMessage)]
    if not humans:
        return []
    mark = state.get("gated_upto")
    ids = [m.id for m in humans]
    if mark and mark in ids:
        pending = humans[ids.index(mark) + 1 :]
    elif mark or "gate" in state:
        pending = humans[-1:]
    else:
        pending = humans  # this thread's gate never ran: every message is new
    return pending[-MAX_CATCH_UP:]


def _answers_around(
    messages: Sequence[BaseMessage], human: HumanMessage
) -> tuple[str | None, str | None]:
    """The agent's messages just before and just after one of the user's, if any.

    The one before is what the user answered (the gate's context); the one after is the reply
    this turn got, whose interest in it ("Congratulations! When do you start?") marks news.
    """
    at = next((i for i, m in enumerate(messages) if m is human), None)
    if at is None:
        return None, None
    before = _first_answer(reversed(messages[:at]))
    return before, _first_answer(messages[at + 1 :], stop_at_human=True)


def _first_answer(messages: Iterable[BaseMessage], *, stop_at_human: bool = False) -> str | None:
    for message in messages:
        if stop_at_human and isinstance(message, HumanMessage):
            return None  # an interrupted turn: the next reply answers a later message
        if (
            isinstance(message, AIMessage)
            and message.text.strip()
            and MODEL_ERROR not in message.response_metadata
        ):
            return message.text[:2000]
    return None


async def _store_turn(
    state: State, ctx: Context, config: RunnableConfig, pending: list[HumanMessage]
) -> list[IngestResult]:
    if not pending:
        return []
    store = await get_store(config)
    scope = resolve_scope(ctx, config)
    epoch = state.get("memory_epoch")
    if epoch is None:  # a thread from before epochs were kept: its epoch is the current one
        epoch = await current_epoch(store.pool, scope)
    try:
        with writing_as(scope, epoch):
            return await _write_turn(state, ctx, config, pending, store, scope)
    except Exception as exc:
        if not is_forgotten(exc):
            raise
        # The user was forgotten while this turn ran: nothing of it is kept (no user text here).
        log.warning("a turn's memories were refused: its user was forgotten meanwhile")
        return []


async def _write_turn(
    state: State,
    ctx: Context,
    config: RunnableConfig,
    pending: list[HumanMessage],
    store: MemoryStore,
    scope: Scope,
) -> list[IngestResult]:
    thread_id = ((config or {}).get("configurable") or {}).get("thread_id")
    # Bookkeeping (the thread's owner, for deleting it with the user; the hit-rate log) does
    # not depend on the gate: it runs beside it, and the node still waits for both, so a
    # failed write fails the turn as before.
    bookkeeping = [_record_usage(store, scope, state)]
    if thread_id:
        bookkeeping.append(store.touch_thread(scope, str(thread_id)))
    # A secret perceive found split across messages: this turn's input rows are written now.
    bookkeeping.append(_scrub_again(store, thread_id))
    gated = asyncio.ensure_future(_gate_pending(store, scope, state, ctx, pending, thread_id))
    await asyncio.gather(gated, *bookkeeping)
    results = gated.result()
    # Only under the context's explicit sharing rule (none by default).
    await publish_learned(store, scope, ctx, results)
    return results


async def _scrub_again(store: MemoryStore, thread_id: Any) -> None:
    await scrub_again(store, thread_id)


async def _gate_pending(
    store: MemoryStore,
    scope: Scope,
    state: State,
    ctx: Context,
    pending: list[HumanMessage],
    thread_id: Any,
) -> list[IngestResult]:
    messages = list(state["messages"])
    gate_model = load_chat_model(ctx.gate_model) if ctx.gate_model else None
    results: list[IngestResult] = []
    for human in pending:
        context, reply = _answers_around(messages, human)
        provenance = {"thread_id": thread_id, "message_id": human.id, "role": "user"}
        if human is pending[-1]:
            # This turn's images: perceive read them from the newest human message.
            results += await _store_images(store, scope, human, state, ctx, provenance)
        text = text_parts(human.content)
        if not text.strip():
            continue
        results += await ingest_text(
            store,
            scope,
            text,
            role="user",
            context=context,
            reply=reply,
            source=Source.CHAT,
            provenance=provenance,
            gate_model=gate_model,
            conflict_strategy=ctx.conflict_strategy,
            require_approval=ctx.require_approval,
        )
    return results


async def _store_images(
    store: MemoryStore,
    scope: Scope,
    human: HumanMessage,
    state: State,
    ctx: Context,
    provenance: dict[str, Any],
) -> list[IngestResult]:
    """Describe and remember this turn's images; replace their checkpointed originals."""
    features = state.get("images") or []
    if not features:
        return []
    thread_id = provenance.get("thread_id")
    if thread_id:
        await scrub_originals(store, str(thread_id), human, state.get("image_needles") or [])
    results = await store_images(store, scope, human, features, ctx, provenance)
    return [IngestResult(r.action, r.decision, r.memory_id, r.reason) for r in results]


async def _record_usage(store: MemoryStore, scope: Scope, state: State) -> None:
    """Log which injected memories the answer used: the input of the hit-rate metric."""
    cited = set(state.get("injected_ids") or [])
    evidence = [e for e in state.get("evidence") or [] if e["id"] in cited]
    evidence += state.get("rules_recalled") or []  # rules: the composer drops them last
    last = state["messages"][-1] if state["messages"] else None
    if evidence and isinstance(last, AIMessage):
        used = used_memory_ids(last.text, evidence)
        await record_injection(store, scope, [e["id"] for e in evidence], used)


async def _summary(state: State, ctx: Context) -> Any:
    """Fold turns that have left the raw window into the summary, two turns at a time."""
    messages: list[BaseMessage] = list(state["messages"])
    previous = state.get("summary")
    if ctx.context_strategy not in ("summarization", "hybrid"):
        return previous
    upto = start_of_last_turns(messages, ctx.recent_turns)
    covered = previous["covers_upto"] if previous and summary_matches(previous, messages) else 0
    if upto - covered < SUMMARY_BATCH_MESSAGES:
        return previous  # batching saves one model call per turn
    try:
        # The memory-only responder is no language model: the summary stays extractive.
        model = None if is_memory_only(ctx.model) else load_chat_model(ctx.model)
        return await refresh_summary(messages, previous, model=model, upto_index=upto)
    except Exception:  # a failed summary must not lose the turn; the old one stays valid
        log.exception("summary refresh failed; keeping the previous summary")
        return state.get("summary")


async def gate_and_store(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    """Gate, redact, dedupe, resolve conflicts and write this turn's memories."""
    config = get_config()
    ctx = runtime.context or Context()
    pending = ungated_humans(state)
    results, summary = await asyncio.gather(
        _store_turn(state, ctx, config, pending), _summary(state, ctx)
    )
    last = state["messages"][-1] if state["messages"] else None
    task = state.get("task") or new_task_state()
    ok = isinstance(last, AIMessage) and bool(last.text.strip())
    task = record_outcome(task, action="respond", ok=ok, error=None if ok else "empty answer")
    finished = finished_outcome(this_turn(list(state["messages"])))
    if finished is not None:
        # The model called finish_task: the task is done, the next turn starts a fresh one.
        store = await get_store(config)
        await publish_completed(store, resolve_scope(ctx, config), ctx, task.get("goal"), finished)
        task = new_task_state()
    approvals = [
        {"id": r.memory_id, "content": r.decision.content, "reason": r.reason}
        for r in results
        if r.memory_id and r.action == Status.PENDING_APPROVAL.value
    ]
    update: dict[str, Any] = {
        "gate": [_record(r) for r in results],
        "summary": summary,
        "task": task,
        "prompt": [],
        "pending_approval": approvals,
    }
    if pending and pending[-1].id:
        update["gated_upto"] = pending[-1].id  # only now: a failed write leaves it where it was
    return update
