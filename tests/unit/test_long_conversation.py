"""A 200-turn scripted conversation through the hybrid strategy and the composer, turn by turn."""

import random

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from memory.working.composer import ComposedPrompt, compose_prompt
from memory.working.context_window import build_working_context
from memory.working.scratchpad import ScratchpadEntry, write
from memory.working.summary import refresh_summary
from memory.working.task_state import TaskState, update_task_from_turn
from memory.working.tokens import content_text, count_message_tokens
from memory.working.tool_output import truncate_tool_output
from memory.working.working_types import SummaryState
from prompts.agent import DEFAULT_SYSTEM_RULES

CONSTRAINT = "Never send emails to real customers."
BUDGET = 2500
TOPICS = ["invoices", "refunds", "search", "exports", "alerts", "the importer", "dashboards"]


def user_text(rng: random.Random, turn: int) -> str:
    if turn == 0:
        return f"New task: build the customer notification service. {CONSTRAINT}"
    topic = rng.choice(TOPICS)
    return rng.choice(
        [
            f"How should {topic} handle {rng.randint(2, 900)} queued items?",
            f"Please refactor {topic} to batch its writes.",
            f"What did we conclude about {topic}?",
            f"Add logging around {topic} with a sample rate of {rng.randint(1, 99)} percent.",
        ]
    )


def assistant_turn(rng: random.Random, turn: int) -> list[BaseMessage]:
    topic = rng.choice(TOPICS)
    body = (
        f"For {topic}, I traced the flow and batched {rng.randint(10, 5000)} rows. "
    ) * rng.randint(3, 12)
    if turn % 7 == 3:  # a tool round trip now and then, with a big, truncated result
        call = {"name": "search_logs", "args": {"q": topic}, "id": f"call{turn}"}
        raw = "\n".join(f"{topic} log line {i}" for i in range(3000))
        view = truncate_tool_output(raw, max_tokens=300)
        return [
            AIMessage("", tool_calls=[call], id=f"c{turn}"),
            ToolMessage(view["text"], tool_call_id=f"call{turn}", id=f"t{turn}"),
            AIMessage(body, id=f"a{turn}"),
        ]
    return [AIMessage(body, id=f"a{turn}")]


def assert_tool_pairs_valid(messages: list[BaseMessage]) -> None:
    issued = {c["id"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls}
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    assert issued == answered


async def run(turns: int, with_task_state: bool) -> list[tuple[ComposedPrompt, int]]:
    rng = random.Random(11)
    messages: list[BaseMessage] = []
    summary: SummaryState | None = None
    task: TaskState | None = None
    pad: list[ScratchpadEntry] = []
    full = 0
    out = []
    for turn in range(turns):
        text = user_text(rng, turn)
        messages.append(HumanMessage(text, id=f"u{turn}"))
        full += count_message_tokens(messages[-1])
        task = update_task_from_turn(task, text)
        if turn % 10 == 5:
            pad = write(pad, f"checked {rng.choice(TOPICS)} at turn {turn}", "progress")
        working = build_working_context(messages, summary=summary, budget_tokens=BUDGET * 2 // 3)
        prompt = compose_prompt(
            system_rules=DEFAULT_SYSTEM_RULES,
            preferences=[{"key": "language", "value": "English"}],
            task_state=task if with_task_state else None,
            scratchpad=pad,
            evidence=[
                {
                    "id": f"{turn:08x}",
                    "date": "2026-05-01",
                    "kind": "episodic",
                    "content": f"user asked about {rng.choice(TOPICS)} last week",
                    "score": 0.5,
                }
            ],
            working=working,
            budget_tokens=BUDGET,
        )
        out.append((prompt, full))
        for msg in assistant_turn(rng, turn):
            messages.append(msg)
            full += count_message_tokens(msg)
        # Off the hot path: the summary the next turn uses.
        summary = await refresh_summary(messages, summary)
    return out


@pytest.mark.parametrize("with_task_state", [True, False])
async def test_200_turns_stay_in_budget_and_keep_the_first_constraint(
    with_task_state: bool,
) -> None:
    results = await run(200, with_task_state)
    for turn, (prompt, _) in enumerate(results):
        msgs = prompt["messages"]
        assert prompt["total_tokens"] <= BUDGET, turn
        assert isinstance(msgs[0], SystemMessage)
        assert CONSTRAINT in "\n".join(content_text(m.content) for m in msgs), turn
        if with_task_state or turn >= 3:  # once it is no longer a raw recent turn
            assert CONSTRAINT in content_text(msgs[0].content), turn
        assert isinstance(msgs[-1], HumanMessage) and msgs[-1].id == f"u{turn}"
        assert_tool_pairs_valid(msgs)
    final, full = results[-1]
    # Turn 200: the constraint from turn 1 is still there, the prompt is a sliver of the history.
    assert final["total_tokens"] <= 0.15 * full
    assert final["sections"]["history"] > 0  # recent raw turns are still present
    if not with_task_state:  # only the summary's key decisions can have carried it
        assert final["sections"]["task_state"] == 0
