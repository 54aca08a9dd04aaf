import hashlib
import json

from memory.working.tokens import count_tokens
from memory.working.tool_output import truncate_tool_output


def test_small_output_passes_through() -> None:
    view = truncate_tool_output("all good", max_tokens=50)
    assert view["text"] == "all good" and not view["truncated"]
    assert view["sha256"] == hashlib.sha256(b"all good").hexdigest()
    assert view["original_tokens"] == count_tokens("all good")


def test_long_text_keeps_head_and_tail_with_marker() -> None:
    lines = [f"line {i}: processing record {i * 13}" for i in range(2000)]
    lines[-1] = "FATAL: disk full after 1999 records"
    text = "\n".join(lines)
    view = truncate_tool_output(text, max_tokens=300)
    assert view["truncated"] and view["kind"] == "text"
    assert count_tokens(view["text"]) <= 300
    assert view["text"].startswith("line 0: processing record 0\n")
    assert view["text"].endswith("FATAL: disk full after 1999 records")
    assert "cut" in view["text"] and f"{view['original_tokens']:,} tokens" in view["text"]
    assert view["sha256"][:16] in view["text"]
    head = view["text"].split("\n[...")[0]
    assert head.endswith("\n") or head.endswith(tuple("0123456789"))  # whole lines
    assert view["original_tokens"] == count_tokens(text)


def test_json_gets_a_structural_summary() -> None:
    data = {
        "total": 4812,
        "next_page": "abc" * 100,
        "results": [
            {"id": i, "title": f"Result {i}", "tags": ["a", "b"], "score": 0.5} for i in range(500)
        ],
    }
    view = truncate_tool_output(json.dumps(data), max_tokens=200)
    text = view["text"]
    assert view["truncated"] and view["kind"] == "json"
    assert count_tokens(text) <= 200
    assert "results: list of 500 (object)" in text
    assert "total: 4812" in text
    assert 'title: "Result 0"' in text and "tags: list of 2 (str)" in text
    assert "(300 chars)" in text  # long strings are sampled, not pasted


def test_non_string_outputs_are_encoded() -> None:
    view = truncate_tool_output([{"k": i} for i in range(1000)], max_tokens=100)
    assert view["kind"] == "json" and "list of 1000 (object)" in view["text"]


def test_huge_json_outline_is_itself_cut() -> None:
    data = {f"key_{i}": {f"sub_{j}": j for j in range(30)} for i in range(30)}
    view = truncate_tool_output(json.dumps(data), max_tokens=120)
    assert count_tokens(view["text"]) <= 120 and view["truncated"]


def test_tiny_budget_still_respected() -> None:
    view = truncate_tool_output("word " * 1000, max_tokens=5)
    assert count_tokens(view["text"]) <= 5 and view["truncated"]


def test_invalid_json_is_treated_as_text() -> None:
    text = "{not json " + "x " * 1000
    view = truncate_tool_output(text, max_tokens=100)
    assert view["kind"] == "text" and count_tokens(view["text"]) <= 100
