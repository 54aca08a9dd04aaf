"""The gate reads a turn within its exchange: the reply it got, plans, conventions, core facts."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from agent.nodes.gate_and_store import _answers_around
from agent.state import State
from memory.gating.gate import GatePolicy, gate, gate_with_model
from memory.gating.rules.chatter import clause_kind
from memory.gating.rules.turn import took_interest
from memory.types import Category

BORDERLINE = "Yeah, same! It helps me stay balanced during my studies."


@pytest.mark.parametrize(
    ("reply", "interested"),
    [
        ("Wow, that's amazing!", True),
        ("So sorry to hear that.", True),
        ("Aww, they look happy! Where did you take them?", True),
        ("哇，恭喜你！", True),
        ("你们什么时候去的？", True),
        ("Got it. What else can I help you with?", False),
        ("Thanks for sharing.", False),
        ("还有什么需要我帮忙的吗？", False),
        ("What else can I help with? And where did you go?", True),
        ("What a day. Is there anything I can help with?", False),
        ("好的。需要我帮你查什么吗？你们去了哪里？", True),
        ("", False),
        (None, False),
    ],
)
def test_interest_in_a_reply(reply: str | None, interested: bool) -> None:
    assert took_interest(reply) is interested


def test_a_reply_that_takes_interest_lifts_a_borderline_turn() -> None:
    # A bar just above the turn's own importance: the reply's interest must lift it over.
    bar = GatePolicy(keep_threshold=gate(BORDERLINE).importance + 0.01)
    alone = gate(BORDERLINE, policy=bar)
    asked = gate(BORDERLINE, reply="Oh nice! How long have you been doing it?", policy=bar)
    stock = gate(BORDERLINE, reply="Noted. Anything else I can help with?", policy=bar)
    assert not alone.keep
    assert asked.keep and asked.importance > alone.importance
    assert stock.importance == alone.importance
    # The reply only informs the decision: the memory is the user's words alone.
    assert "How long" not in asked.content


def test_a_reply_does_not_rescue_chit_chat() -> None:
    assert not gate("Thanks, you're the best!", reply="Wow, congrats! When do you start?").keep


async def test_the_model_gate_passes_the_reply_to_its_rule_fallback() -> None:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    broken = FakeListChatModel(responses=["not json", "still not json"])
    decision = await gate_with_model(broken, BORDERLINE, reply="Wow! Since when?")
    assert decision.keep and decision.reason.startswith("model answer malformed")


@pytest.mark.parametrize(
    ("clause", "kind"),
    [
        ("Can't wait to paint with you next Saturday.", "content"),
        ("Let's get everything ready and paint next Saturday.", "content"),
        ("Have a great weekend!", "social"),
        ("Cute little guys!", "social"),
        ("They look so cute!", "social"),
        ("It feels like it paid off now that I'm an assistant manager", "content"),
        ("I'm so happy for you", "social"),
    ],
)
def test_plans_and_news_inside_reactions(clause: str, kind: str) -> None:
    assert clause_kind(clause) == kind


def test_a_dated_plan_said_eagerly_is_kept() -> None:
    assert gate("Sounds good, Evan! Can't wait to paint with you next Saturday.").keep
    assert not gate("Sounds good, Evan! Can't wait!").keep


@pytest.mark.parametrize(
    "text", ["Board games are always a blast.", "Dogs always cheer us up when we're down."]
)
def test_always_in_a_description_is_not_a_standing_rule(text: str) -> None:
    assert not gate(text).reason.startswith("standing rule")


@pytest.mark.parametrize("text", ["Always cc my manager on invoices.", "Reply in English always."])
def test_always_in_an_instruction_still_makes_a_rule(text: str) -> None:
    decision = gate(text)
    assert decision.keep
    assert decision.category in (Category.CONSTRAINT, Category.PREFERENCE)


@pytest.mark.parametrize(
    "text", ["我有一型糖尿病。", "I'm left-handed.", "我的领导叫王强。", "I live in Leeds."]
)
def test_core_personal_facts_are_kept_however_short(text: str) -> None:
    decision = gate(text)
    assert decision.keep and decision.category is Category.FACT
    assert decision.reason.startswith("core personal fact")


@pytest.mark.parametrize(
    "text", ["We use pnpm, not npm, in this repo.", "我们仓库用 pnpm，不用 npm。"]
)
def test_a_convention_is_a_preference(text: str) -> None:
    decision = gate(text)
    assert decision.keep and decision.category is Category.PREFERENCE


def test_the_agent_gates_a_turn_with_the_answers_around_it() -> None:
    state: State = {
        "messages": [
            AIMessage("What did you do this weekend?", id="a1"),
            HumanMessage("I ran my first half marathon.", id="h1"),
            AIMessage("", id="a2"),  # a tool-calling step has no words
            AIMessage("Congratulations! How did it feel?", id="a3"),
        ]
    }
    assert _answers_around(state["messages"], state["messages"][1]) == (  # type: ignore[arg-type]
        "What did you do this weekend?",
        "Congratulations! How did it feel?",
    )
    alone = HumanMessage("Hi", id="h")
    assert _answers_around([alone], alone) == (None, None)
