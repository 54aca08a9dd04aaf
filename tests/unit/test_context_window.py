from collections.abc import Sequence

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from memory.working.context_window import build_working_context
from memory.working.summary import extractive_summary
from memory.working.tokens import content_text, count_messages_tokens
from memory.working.working_types import SummaryItem

CONSTRAINT = "Never deploy on Fridays."
DECISION = "We decided to use Postgres 15 for the ledger."
OLD_FACT = "The invoice total was 4312 euros."
FAILURE = "The export failed with error 503."
MID_FACT = "The staging host is db-stage-7 on port 6543."
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def conversation(turns: int = 14) -> list[BaseMessage]:
    """`turns` complete turns (user + assistant); markers at turns 0, 1, 2 and 8."""
    msgs: list[BaseMessage] = []
    for t in range(turns):
        user = f"tell me more about topic {LETTERS[t]}"
        reply = f"here is some more detail about topic {LETTERS[t]}"
        if t == 0:
            user = CONSTRAINT
        if t == 1:
            user, reply = OLD_FACT, DECISION
        if t == 2:
            reply = FAILURE
        if t == 8:
            reply = MID_FACT
        msgs += [HumanMessage(user, id=f"u{t}"), AIMessage(reply, id=f"a{t}")]
    return msgs


def texts(items: Sequence[SummaryItem] | Sequence[BaseMessage]) -> str:
    parts = [
        content_text(x.content) if isinstance(x, BaseMessage) else str(x["text"]) for x in items
    ]
    return "\n".join(parts)


def with_latest(msgs: Sequence[BaseMessage], text: str = "what next?") -> list[BaseMessage]:
    return [*msgs, HumanMessage(text, id="latest")]


def test_sliding_window_keeps_last_n_turns_only() -> None:
    msgs = with_latest(conversation())
    w = build_working_context(msgs, strategy="sliding_window", window_turns=4, budget_tokens=5000)
    assert [m.id for m in w["messages"]] == ["u11", "a11", "u12", "a12", "u13", "a13", "latest"]
    assert w["summary"] == [] and w["decisions"] == []
    assert CONSTRAINT not in texts(w["messages"])  # the early constraint is lost: its weakness
    assert w["dropped_messages"] == len(msgs) - 7
    assert w["dropped_tokens"] == count_messages_tokens(msgs[:-7])


def test_summarization_folds_all_older_turns() -> None:
    history = conversation()
    summary = extractive_summary(history)
    msgs = with_latest(history)
    w = build_working_context(msgs, strategy="summarization", summary=summary, budget_tokens=5000)
    assert [m.id for m in w["messages"]] == ["u12", "a12", "u13", "a13", "latest"]
    folded = texts(w["summary"])
    for marker in (CONSTRAINT, DECISION, OLD_FACT, FAILURE, MID_FACT):
        assert marker in folded
    assert "topic a" not in folded  # filler carries no decision state
    assert w["decisions"] == []


def test_hybrid_three_raw_turns_summary_window_and_key_decisions() -> None:
    history = conversation()
    summary = extractive_summary(history)
    msgs = with_latest(history)
    w = build_working_context(msgs, summary=summary, budget_tokens=5000)
    assert w["strategy"] == "hybrid"
    # Last 3 turns raw: turns 12, 13 and the latest.
    assert [m.id for m in w["messages"]] == ["u12", "a12", "u13", "a13", "latest"]
    # Turns 4-10 back (history turns 5..11) summarised, facts included.
    assert texts(w["summary"]) == MID_FACT
    # Older turns: key decisions and constraints only; facts and failures are gone.
    old = texts(w["decisions"])
    assert CONSTRAINT in old and DECISION in old
    assert OLD_FACT not in old and FAILURE not in old
    assert {it["kind"] for it in w["decisions"]} == {"constraint", "decision"}
    assert w["unsummarised_messages"] == 0
    assert w["dropped_tokens"] == count_messages_tokens(msgs[: len(msgs) - 5])


def test_hybrid_without_summary_extracts_the_window_on_the_spot() -> None:
    msgs = with_latest(conversation())
    w = build_working_context(msgs, summary=None, budget_tokens=5000)
    assert MID_FACT in texts(w["summary"])
    assert w["decisions"] == []  # nothing covered the old turns
    assert w["unsummarised_messages"] == 2 * 5  # turns 0-4, two messages each


def test_hybrid_lagging_summary_fills_the_gap() -> None:
    history = conversation()
    summary = extractive_summary(history, upto_index=2 * 6)  # covers turns 0-5 only
    msgs = with_latest(history)
    w = build_working_context(msgs, summary=summary, budget_tokens=5000)
    assert MID_FACT in texts(w["summary"])  # turn 8, extracted on the spot
    # Accounting from the summary's prefix count plus the uncovered part equals a recount.
    assert w["dropped_tokens"] == count_messages_tokens(msgs[: w["dropped_messages"]])
    assert CONSTRAINT in texts(w["decisions"])
    assert w["summary_covers_upto"] == 12


def test_stale_summary_is_ignored() -> None:
    history = conversation()
    summary = extractive_summary(history)
    rewritten = [HumanMessage(m.content, id=f"x{i}") for i, m in enumerate(history)]
    w = build_working_context(with_latest(rewritten), summary=summary, budget_tokens=5000)
    assert w["summary_covers_upto"] == 0
    assert CONSTRAINT not in texts(w["decisions"])


def test_selective_keeps_important_messages_in_time_order() -> None:
    msgs = with_latest(conversation())
    budget = 120
    w = build_working_context(msgs, strategy="selective", budget_tokens=budget)
    kept = texts(w["messages"])
    for marker in (CONSTRAINT, DECISION, FAILURE, OLD_FACT, MID_FACT):
        assert marker in kept
    assert "topic c" not in kept  # early filler is the first to go
    positions = [msgs.index(m) for m in w["messages"]]
    assert positions == sorted(positions)
    assert w["messages"][-1].id == "latest"
    assert w["tokens"]["total"] <= budget
    assert w["dropped_messages"] == len(msgs) - len(w["messages"])


@pytest.mark.parametrize("strategy", ["sliding_window", "summarization", "selective", "hybrid"])
def test_every_strategy_fits_the_budget_and_keeps_the_latest_turn(strategy: str) -> None:
    history = conversation(20)
    summary = extractive_summary(history)
    msgs = with_latest(history, "and now, the final question about everything?")
    for budget in (40, 80, 150, 400):
        w = build_working_context(
            msgs,
            strategy=strategy,  # type: ignore[arg-type]
            summary=summary,
            budget_tokens=budget,
        )
        assert w["messages"][-1].id == "latest"
        assert w["tokens"]["total"] <= budget
        assert w["tokens"]["total"] == (
            w["tokens"]["messages"] + w["tokens"]["summary"] + w["tokens"]["decisions"]
        )


def test_tight_budget_keeps_constraints_before_other_items() -> None:
    history = conversation(20)
    summary = extractive_summary(history)
    w = build_working_context(with_latest(history), summary=summary, budget_tokens=30)
    assert texts(w["decisions"]) == CONSTRAINT
    assert w["dropped_items"] >= 1


def test_orphaned_tool_results_are_repaired() -> None:
    call = {"name": "search", "args": {"q": "x"}, "id": "call1"}
    msgs: list[BaseMessage] = [
        HumanMessage("find x", id="u0"),
        AIMessage("", tool_calls=[call], id="a0"),
        ToolMessage("result " * 200, tool_call_id="call1", id="t0"),
        AIMessage("found x", id="a0b"),
        HumanMessage("thanks, and y?", id="latest"),
    ]
    # The budget fits the last answer but not the big tool result: the call must go too.
    w = build_working_context(msgs, strategy="sliding_window", budget_tokens=40)
    ids = [m.id for m in w["messages"]]
    assert "t0" not in ids and "a0" not in ids
    assert ids[-2:] == ["a0b", "latest"]


def test_unknown_strategy() -> None:
    with pytest.raises(ValueError, match="unknown context strategy"):
        build_working_context([HumanMessage("hi")], strategy="everything")  # type: ignore[arg-type]
