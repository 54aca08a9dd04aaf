"""Model selection: the memory-only default, missing integration packages, bad strings."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage

from agent.memory_only import MemoryOnlyChatModel, memory_only_reply, relevant_preferences
from agent.model import ModelConfigError, is_memory_only, load_chat_model
from memory.working.prompt_sections import EvidenceItem, PrefItem
from prompts.agent import MEMORY_ONLY_LABEL, MEMORY_ONLY_NOTHING


@pytest.mark.parametrize("spec", ["", "  ", "memory-only", "MEMORY-ONLY", " memory-only "])
def test_no_model_or_memory_only_selects_the_builtin_responder(spec: str) -> None:
    assert is_memory_only(spec)
    assert isinstance(load_chat_model(spec), MemoryOnlyChatModel)


@pytest.mark.parametrize(
    ("spec", "package", "extra"),
    [
        ("anthropic:claude-sonnet-4-5", "langchain-anthropic", "anthropic"),
        ("ollama:llama3.1", "langchain-ollama", "ollama"),
        ("ollama/llama3.1", "langchain-ollama", "ollama"),
    ],
)
def test_a_missing_integration_package_is_named(
    spec: str, package: str, extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As if not installed, whatever this environment has (langmem brings langchain-anthropic):
    # a None entry in sys.modules makes the import fail with ImportError.
    monkeypatch.setitem(sys.modules, package.replace("-", "_"), None)
    load_chat_model.cache_clear()
    with pytest.raises(ModelConfigError) as info:
        load_chat_model(spec)
    message = str(info.value)
    assert package in message and f"uv sync --extra {extra}" in message
    assert "No chat model is configured" not in message


@pytest.mark.parametrize("spec", ["gpt-4o", "openai:", ":gpt", "nonsense-provider:model"])
def test_unusable_model_strings_say_how_to_fix_them(spec: str) -> None:
    load_chat_model.cache_clear()
    with pytest.raises(ModelConfigError, match="MEMORY_AGENT_MODEL"):
        load_chat_model(spec)


_text = st.text(min_size=0, max_size=300)
_evidence = st.builds(
    lambda i, c, k: EvidenceItem(id=f"{i:032x}", date="2026-05-01", kind=k, content=c, score=0.5),
    st.integers(min_value=0, max_value=2**120),
    _text,
    st.sampled_from(["episodic", "semantic", "preference", "procedural"]),
)
_prefs = st.builds(lambda k, v: PrefItem(key=k, value=v), _text, _text)


@settings(max_examples=200, deadline=None)
@given(st.lists(_evidence, max_size=8), st.lists(_prefs, max_size=5))
def test_every_memory_only_reply_is_labelled_and_one_line_per_memory(
    evidence: list[EvidenceItem], prefs: list[PrefItem]
) -> None:
    reply = memory_only_reply(evidence, prefs)
    assert reply.startswith(MEMORY_ONLY_LABEL)
    lines = reply.split("\n")
    # label + (header + one line each) per section, or the "nothing recalled" line
    want = 1 + (1 + len(evidence) if evidence else 0) + (1 + len(prefs) if prefs else 0)
    assert len(lines) == (want if evidence or prefs else 2)
    for e in evidence:
        assert f"[mem:{e['id'][:8]} · 2026-05-01 · {e['kind']}]" in reply


async def test_the_responder_streams_the_same_reply_it_returns() -> None:
    ev = [EvidenceItem(id="ab" * 16, date="2026-01-02", kind="preference",
                       content="likes tea\nmultiline", score=1.0)]  # fmt: skip
    model = MemoryOnlyChatModel().with_recall(ev, [])
    whole = await model.ainvoke([HumanMessage("what do I like?")])
    assert isinstance(whole, AIMessage) and not whole.tool_calls
    chunks = [c.content async for c in model.astream([HumanMessage("x")])]
    assert len(chunks) > 1 and "".join(str(c) for c in chunks) == whole.content
    assert "likes tea multiline" in str(whole.content)
    assert model.bind_tools([]) is model


async def test_only_preferences_the_message_touches_are_listed() -> None:
    prefs = [PrefItem(key="drink", value="green tea in the morning"),
             PrefItem(key="editor", value="VS Code with vim keys"),
             PrefItem(key="饮品", value="早上喝绿茶")]  # fmt: skip
    model = MemoryOnlyChatModel().with_recall([], prefs)
    reply = str((await model.ainvoke([HumanMessage("What should I drink tomorrow?")])).content)
    assert "green tea" in reply and "VS Code" not in reply and "绿茶" not in reply
    assert reply.count(MEMORY_ONLY_LABEL) == 1 and len(MEMORY_ONLY_LABEL) <= 80
    reply = str((await model.ainvoke([HumanMessage("明天喝绿茶还是咖啡？")])).content)
    assert "绿茶" in reply and "green tea" not in reply
    # Nothing touched and nothing recalled: the label and one line, no profile dump.
    reply = str((await model.ainvoke([HumanMessage("What's the capital of France?")])).content)
    assert reply.split("\n") == [MEMORY_ONLY_LABEL, MEMORY_ONLY_NOTHING]


@pytest.mark.parametrize(
    ("message", "shown"),
    [
        ("What do I like to drink?", 2), ("What is my favourite colour?", 2),
        ("我喜欢喝什么？", 2), ("What should I drink tomorrow?", 1),
        ("How do I sort a list in Python?", 0), ("What's the capital of France?", 0),
        ("我应该怎么排序列表", 0),
    ],
)  # fmt: skip
def test_a_question_about_the_user_shows_the_profile_and_others_only_what_they_touch(
    message: str, shown: int
) -> None:
    prefs = [PrefItem(key="drink", value="green tea"), PrefItem(key="editor", value="vim")]
    assert len(relevant_preferences(message, prefs)) == shown
