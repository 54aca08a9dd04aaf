"""The agent graph in-process: real Postgres checkpointer, real stores, a stub OpenAI server."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command

from agent.checkpointer import open_checkpointer
from agent.context import Context
from agent.graph import build_graph
from agent.model import load_chat_model
from memory.settings import Settings
from memory.storage.store import MemoryStore, open_store
from memory.system import recaller
from memory.types import Scope, Status
from memory.working.scratchpad_tools import WRITE_TOOL
from tests.support.memory_stores import truncate
from tests.support.stub_llm import StubLLM


@pytest.fixture
def settings(pg_db_url: str, tmp_data_dir: Path, embedding_model_dir: Path) -> Settings:
    return Settings(
        database_url=pg_db_url, data_dir=tmp_data_dir, embedding_model_dir=embedding_model_dir
    )


@pytest.fixture
async def store(settings: Settings) -> AsyncIterator[MemoryStore]:
    async with open_store(settings) as s:
        await truncate(s)
        yield s


@pytest.fixture
def model(stub_llm: StubLLM) -> StubLLM:
    load_chat_model.cache_clear()  # the stub's URL is read when the model is built
    return stub_llm


def _prompt_text(request: dict[str, Any]) -> str:
    return "\n".join(
        m["content"] if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
        for m in request["messages"]
    )


def _chat_prompts(stub: StubLLM) -> list[str]:
    # Only the answer calls (the gate runs on rules; summaries are batched and recognisable).
    return [_prompt_text(r) for r in stub.requests() if "tools" in r]


async def _turn(graph: Any, store: MemoryStore, thread: str, ctx: Context, text: Any) -> Any:
    config = {"configurable": {"thread_id": thread, "memory_store": store}}
    return await graph.ainvoke({"messages": [("user", text)]}, config, context=ctx)


async def test_preference_crosses_threads_but_not_users(
    settings: Settings, store: MemoryStore, model: StubLLM
) -> None:
    alice = Context(tenant_id="acme", user_id="alice")
    bob = Context(tenant_id="acme", user_id="bob")
    async with open_checkpointer(settings) as saver:
        graph = build_graph().compile(checkpointer=saver)
        out = await _turn(graph, store, "t1", alice, "I prefer answers with TypeScript examples.")
        assert any(g["action"] == "stored" for g in out["gate"])
        model.reset()
        await _turn(graph, store, "t2", alice, "How do I read a file?")
        await _turn(graph, store, "t3", bob, "How do I read a file?")
    alice_prompt, bob_prompt = _chat_prompts(model)
    assert "typescript" in alice_prompt.lower()
    assert "typescript" not in bob_prompt.lower()
    # What was injected is logged per turn: the input of the hit-rate metric.
    injections = [
        e for e in await store.events(Scope("acme", "alice")) if e["event"] == "injection"
    ]
    assert injections and all(e["detail"]["injected"] for e in injections)


async def test_chitchat_is_not_stored_and_working_memory_survives_restart(
    settings: Settings, store: MemoryStore, model: StubLLM
) -> None:
    ctx = Context(tenant_id="acme", user_id="carol")
    thread = uuid.uuid4().hex
    async with open_checkpointer(settings) as saver:
        graph = build_graph().compile(checkpointer=saver)
        out = await _turn(graph, store, thread, ctx, "Hi there, thanks!")
        assert [g["action"] for g in out["gate"]] == ["dropped"]
        model.script(
            {"tool_calls": [{"name": WRITE_TOOL, "arguments": {
                "content": "outline agreed: 3 bullets", "category": "progress"}}]},
            "Here is the draft.",
        )  # fmt: skip
        await _turn(
            graph, store, thread, ctx, "Write a release note for v2. It must be under 100 words."
        )
    assert await store.list_memories(Scope("acme", "carol")) != []
    # A new saver and graph (a restarted process) see the same task state.
    async with open_checkpointer(settings) as saver:
        graph = build_graph().compile(checkpointer=saver)
        state = await graph.aget_state({"configurable": {"thread_id": thread}})
    task = state.values["task"]
    assert task["goal"] and "release note" in task["goal"].lower()
    assert any("100 words" in c for c in task["constraints"])
    pad = state.values["scratchpad"]
    assert [(e["category"], e["content"]) for e in pad] == [
        ("progress", "outline agreed: 3 bullets")
    ]


@pytest.mark.parametrize("bad", ["", "   \x00\x01  ", "\n\t \r\n\x7f"])
async def test_empty_or_garbage_input_is_refused_safely(
    settings: Settings, store: MemoryStore, model: StubLLM, bad: Any
) -> None:
    ctx = Context(tenant_id="acme", user_id="dave")
    async with open_checkpointer(settings) as saver:
        graph = build_graph().compile(checkpointer=saver)
        out = await _turn(graph, store, uuid.uuid4().hex, ctx, bad)
    assert out["rejected"]
    assert model.requests() == []
    assert await store.list_memories(Scope("acme", "dave")) == []


async def test_invalid_unicode_and_control_characters_are_cleaned(
    settings: Settings, store: MemoryStore, model: StubLLM
) -> None:
    ctx = Context(tenant_id="acme", user_id="dave")
    thread = uuid.uuid4().hex
    async with open_checkpointer(settings) as saver:
        graph = build_graph().compile(checkpointer=saver)
        out = await _turn(graph, store, thread, ctx, "my office is room \ud800 42\x00\x07b")
        state = await graph.aget_state({"configurable": {"thread_id": thread}})
    stored = state.values["messages"][0].content
    assert stored == "my office is room \ufffd 42b"
    assert not out["rejected"]
    assert "\x00" not in json.dumps(model.requests())


async def test_huge_message_is_truncated_not_lost(
    settings: Settings, store: MemoryStore, model: StubLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORY_MAX_INPUT_CHARS", "10000")  # the operator's limit, not the run's
    ctx = Context(tenant_id="acme", user_id="erin")
    huge = "I prefer tabs over spaces. " + "lorem ipsum " * 100_000
    async with open_checkpointer(settings) as saver:
        graph = build_graph().compile(checkpointer=saver)
        out = await _turn(graph, store, uuid.uuid4().hex, ctx, huge)
    assert len(out["messages"][0].content) <= 10_000
    assert out["prompt_tokens"]["total"] <= ctx.prompt_budget_tokens
    assert len(model.requests()) >= 1


async def test_brake_interrupts_and_resumes(
    settings: Settings, store: MemoryStore, model: StubLLM
) -> None:
    ctx = Context(tenant_id="acme", user_id="frank", max_steps_per_task=3)
    thread = uuid.uuid4().hex
    config = {"configurable": {"thread_id": thread, "memory_store": store}}
    async with open_checkpointer(settings) as saver:
        graph = build_graph().compile(checkpointer=saver)
        await _turn(graph, store, thread, ctx, "Plan a trip to Lisbon.")
        out = await _turn(graph, store, thread, ctx, "Add a day in Porto.")
        assert out["__interrupt__"][0].value["brake"] == "max_steps_per_task"
        calls_before = len(model.requests())
        out = await graph.ainvoke(Command(resume="continue"), config, context=ctx)
    assert "__interrupt__" not in out
    assert len(model.requests()) > calls_before
    assert out["task"]["steps"] < 3


async def test_high_risk_memory_waits_for_approval(
    settings: Settings, store: MemoryStore, model: StubLLM
) -> None:
    ctx = Context(tenant_id="acme", user_id="gina")
    thread = uuid.uuid4().hex
    config = {"configurable": {"thread_id": thread, "memory_store": store}}
    async with open_checkpointer(settings) as saver:
        graph = build_graph().compile(checkpointer=saver)
        out = await _turn(
            graph, store, thread, ctx, "Always auto-approve refunds under $500 without asking me."
        )
        pending = out["__interrupt__"][0].value["memories"]
        assert len(pending) == 1
        row = await store.get(Scope("acme", "gina"), pending[0]["id"])
        assert row is not None and row.status is Status.PENDING_APPROVAL
        assert await recaller(store).recall(Scope("acme", "gina"), "refunds", k=5) == []
        await graph.ainvoke(Command(resume="approve"), config, context=ctx)
    row = await store.get(Scope("acme", "gina"), pending[0]["id"])
    assert row is not None and row.status is Status.ACTIVE


@pytest.mark.parametrize(
    "text",
    [
        "Always pay my rent from account 12345 on the 1st.",  # money
        "Delete all emails from my old boss.",  # deletion
        "Use my work login for the VPN.",  # credentials
        "Reply to recruiters on my behalf that I'm not interested.",  # sending as the user
        "以后每个月帮我从工资卡交房租。",
    ],
)
async def test_acting_for_the_user_waits_and_a_wrong_answer_asks_again(
    settings: Settings, store: MemoryStore, model: StubLLM, text: str
) -> None:
    ctx = Context(tenant_id="acme", user_id="hugo")
    thread = uuid.uuid4().hex
    config = {"configurable": {"thread_id": thread, "memory_store": store}}
    async with open_checkpointer(settings) as saver:
        graph = build_graph().compile(checkpointer=saver)
        out = await _turn(graph, store, thread, ctx, text)
        asked = out["__interrupt__"][0].value
        assert "approve" in asked["resume_values"] and "reject" in asked["resume_values"]
        [pending] = asked["memories"]
        # A typo is not a "no": nothing is decided, the memory still waits, and it asks again.
        out = await graph.ainvoke(Command(resume="aprove"), config, context=ctx)
        again = out["__interrupt__"][0].value
        assert "unknown answer 'aprove'" in again["error"]
        row = await store.get(Scope("acme", "hugo"), pending["id"])
        assert row is not None and row.status is Status.PENDING_APPROVAL
        out = await graph.ainvoke(Command(resume={"approve": [pending["id"]]}), config, context=ctx)
        assert "__interrupt__" not in out
    row = await store.get(Scope("acme", "hugo"), pending["id"])
    assert row is not None and row.status is Status.ACTIVE


async def test_a_habit_or_a_past_act_needs_no_approval(
    settings: Settings, store: MemoryStore, model: StubLLM
) -> None:
    ctx = Context(tenant_id="acme", user_id="ivy")
    async with open_checkpointer(settings) as saver:
        graph = build_graph().compile(checkpointer=saver)
        for text in ("I always buy organic vegetables.", "I deleted my Facebook account in 2022."):
            out = await _turn(graph, store, uuid.uuid4().hex, ctx, text)
            assert "__interrupt__" not in out, text
            assert any(g["action"] == "stored" for g in out["gate"]), (text, out["gate"])


@pytest.mark.parametrize("shared", [True, False])
async def test_finished_task_resets_task_state_and_is_shared_only_by_rule(
    store: MemoryStore, model: StubLLM, shared: bool
) -> None:
    from memory.sharing.events import SHARED_USER
    from memory.storage.deletion_outbox import owner_digest
    from memory.storage.forget import DERIVED_FROM
    from memory.working.task_tools import FINISH_TOOL

    async with open_checkpointer(max_size=2) as saver:
        graph = build_graph().compile(checkpointer=saver)
        ctx = Context(
            model="openai:stub",
            user_id="alice",
            tenant_id="acme",
            agent_id="migrator",
            share_categories=["completed_task"] if shared else [],
        )
        thread = str(uuid.uuid4())
        first = await _turn(
            graph, store, thread, ctx, "Please migrate the billing service to Postgres 16."
        )
        assert first["task"]["goal"]  # the instruction set the task's goal
        finish = {"name": FINISH_TOOL, "arguments": {"outcome": "Billing runs on PG 16"}}
        model.script({"tool_calls": [finish]}, "Done: billing now runs on Postgres 16.")
        second = await _turn(graph, store, thread, ctx, "Great, is it finished?")
    assert second["task"]["goal"] is None  # the task ended; the next one starts afresh
    hits = await recaller(store).recall(
        Scope("acme", SHARED_USER), "billing Postgres migration", k=5
    )
    completed = [h.record for h in hits if h.record.content.startswith("Completed task:")]
    if not shared:
        assert completed == []
        return
    assert len(completed) == 1
    record = completed[0]
    assert "billing" in record.content.lower() and "PG 16" in record.content
    assert record.provenance["agent_id"] == "migrator"
    assert record.provenance["trust"] == "low"
    assert record.provenance[DERIVED_FROM] == owner_digest(Scope("acme", "alice"))


async def test_deleting_a_memory_retracts_its_shared_copy(
    store: MemoryStore, model: StubLLM
) -> None:
    """A published copy lives in every user's prompt: the source's deletion takes it along."""
    from memory.sharing.events import SHARED_USER
    from memory.storage.forget_one import delete_memory

    ctx = Context(model="openai:stub", user_id="alice", tenant_id="acme", agent_id="helper",
                  share_categories=["fact", "decision", "preference"])  # fmt: skip
    shared = Scope("acme", SHARED_USER)
    async with open_checkpointer(max_size=2) as saver:
        graph = build_graph().compile(checkpointer=saver)
        await _turn(graph, store, str(uuid.uuid4()), ctx,
                    "Our team's staging database runs on Postgres 16 in Frankfurt.")  # fmt: skip
    mine = await store.list_memories(Scope("acme", "alice"))
    copies = await store.list_memories(shared)
    assert mine and copies, (mine, copies)
    async with store.pool.acquire() as conn:
        events = await conn.fetchval("SELECT count(*) FROM agent_events WHERE tenant_id = 'acme'")
    assert events > 0
    for record in mine:
        receipt = await delete_memory(store, Scope("acme", "alice"), record.id, reason="test")
        assert receipt["memories"] == 1
    assert await store.list_memories(shared) == []
    async with store.pool.acquire() as conn:
        left = await conn.fetchval(
            "SELECT count(*) FROM agent_events WHERE tenant_id = 'acme'"
            " AND data::text LIKE '%Frankfurt%'"
        )
    assert left == 0


async def test_a_past_question_gets_the_replaced_value_cited_with_its_window(
    settings: Settings, store: MemoryStore, model: StubLLM
) -> None:
    alice = Context(tenant_id="acme", user_id="alice")
    async with open_checkpointer(settings) as saver:
        graph = build_graph().compile(checkpointer=saver)
        await _turn(graph, store, "t1", alice, "I live in Berlin.")
        out = await _turn(graph, store, "t2", alice, "I moved to Munich last month.")
        assert [g["action"] for g in out["gate"]] == ["superseded"]
        model.reset()
        await _turn(graph, store, "t3", alice, "Where did I live before Munich?")
        await _turn(graph, store, "t4", alice, "Where do I live?")
    past, current = _chat_prompts(model)
    evidence = past.split("## Retrieved memories", 1)[1]
    berlin = next(line for line in evidence.splitlines() if "Berlin" in line)
    assert "since replaced" in berlin and "held " in berlin
    assert evidence.index("Berlin") < evidence.index("Munich")
    assert "Berlin" not in current.split("## Retrieved memories", 1)[-1]
