import json

import pytest
from langchain_core.messages import ToolMessage

from memory.working import scratchpad as sp
from memory.working.scratchpad_tools import make_scratchpad_tools, ops_from_messages
from memory.working.tokens import count_tokens


def test_write_read_clear_by_category() -> None:
    pad = sp.write([], "found 3 failing tests", "progress")
    pad = sp.write(pad, "fix the date parser", "TODO")
    pad = sp.write(pad, "parser fixed", "progress")
    assert [e["content"] for e in sp.read(pad, "progress")] == [
        "found 3 failing tests",
        "parser fixed",
    ]
    assert sp.read(pad, "todo")[0]["content"] == "fix the date parser"  # category normalised
    assert len(sp.read(pad)) == 3
    assert [e["category"] for e in sp.clear(pad, "progress")] == ["todo"]
    assert sp.clear(pad) == []
    assert len(pad) == 3  # pure: the input list is untouched


def test_entry_shape_is_plain_json() -> None:
    (entry,) = sp.write([], "note", "fact")
    assert set(entry) == {"id", "category", "content", "ts"}
    assert json.loads(json.dumps(entry)) == entry
    assert entry["ts"].endswith("+00:00")


def test_entry_cap_evicts_oldest() -> None:
    pad: list[sp.ScratchpadEntry] = []
    for i in range(sp.MAX_ENTRIES + 7):
        pad = sp.write(pad, f"note {i}")
    assert len(pad) == sp.MAX_ENTRIES == 50
    assert pad[0]["content"] == "note 7" and pad[-1]["content"] == "note 56"


def test_token_cap_evicts_oldest() -> None:
    pad: list[sp.ScratchpadEntry] = []
    for i in range(10):
        pad = sp.write(pad, f"entry {i} " + "word " * 30, max_tokens=100)
    assert sum(count_tokens(e["content"]) for e in pad) <= 100
    assert pad[-1]["content"].startswith("entry 9")
    assert len(pad) < 10


def test_single_entry_is_trimmed() -> None:
    (entry,) = sp.write([], "x " * 2000)
    assert count_tokens(entry["content"]) <= sp.MAX_ENTRY_TOKENS


def test_empty_write_is_ignored() -> None:
    assert sp.write([], "   ") == []


def test_scratchpad_lines() -> None:
    assert sp.scratchpad_lines([]) == []
    pad = sp.write(sp.write([], "a\nb", "x"), "c", "y")
    assert sp.scratchpad_lines(pad) == ["[x] a b", "[y] c"]


def test_tools_return_ops_the_graph_applies() -> None:
    tools = {t.name: t for t in make_scratchpad_tools()}
    assert set(tools) == {"scratchpad_write", "scratchpad_clear"}
    write_msg = tools["scratchpad_write"].invoke(
        {
            "type": "tool_call",
            "id": "c1",
            "name": "scratchpad_write",
            "args": {"content": "API needs a token", "category": "Fact"},
        }
    )
    clear_msg = tools["scratchpad_clear"].invoke(
        {"type": "tool_call", "id": "c2", "name": "scratchpad_clear", "args": {"category": "todo"}}
    )
    assert isinstance(write_msg, ToolMessage) and "Noted" in write_msg.content
    ops = ops_from_messages([write_msg, ToolMessage("other", tool_call_id="x"), clear_msg])
    assert [o["op"] for o in ops] == ["write", "clear"]
    pad = sp.write([], "old todo", "todo")
    for op in ops:
        pad = sp.apply_op(pad, op)
    assert [(e["category"], e["content"]) for e in pad] == [("fact", "API needs a token")]


def test_tool_schema_is_simple() -> None:
    (write_tool, _) = make_scratchpad_tools()
    assert set(write_tool.args) == {"content", "category"}
    assert write_tool.name == "scratchpad_write"


def test_apply_op_rejects_garbage() -> None:
    with pytest.raises(ValueError, match="not a scratchpad operation"):
        sp.apply_op([], {"op": "write", "entry": None, "category": None})
