"""Deeply nested JSON from a client is refused with a clear error, never a crash.

Python's parser recurses per nesting level: 100,000 levels raised RecursionError (a traceback
from `memory-agent import`, a 500 from the server). Hostile shapes here: arrays, objects, both
mixed, whitespace between brackets, depth hidden inside an otherwise valid message, and the
counter-cases a depth check must not miscount (brackets inside strings, escaped quotes).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from memory.gating.ingest.history import read_messages
from memory.json_limits import MAX_JSON_DEPTH, JSONDepthError, json_depth_exceeds, loads_bounded
from memory.model_json import parse_json_reply
from memory.types import Scope
from memory.working.json_outline import parse_json
from tests.support.langgraph_server import LangGraphServer
from tests.support.ports import REPO_ROOT
from tests.support.secured import bearer

DEEP = 100_000
ID = "0" * 32  # the shape of a memory id (none exists: the body is refused first)


def _arrays(n: int) -> str:
    return "[" * n + "]" * n


def _objects(n: int) -> str:
    return '{"a":' * n + "1" + "}" * n


def _mixed(n: int) -> str:
    opens = ["[" if i % 2 == 0 else '{"k":' for i in range(n)]
    closes = ["]" if i % 2 == 0 else "}" for i in reversed(range(n))]
    return "".join(opens) + "0" + "".join(closes)


def _spaced(n: int) -> str:
    return "[ \n\t" * n + "]" * n


SHAPES: dict[str, Callable[[int], str]] = {
    "arrays": _arrays, "objects": _objects, "mixed": _mixed, "spaced": _spaced,
}  # fmt: skip


@pytest.mark.parametrize("shape", SHAPES)
def test_deep_shapes_are_refused_before_parsing(shape: str) -> None:
    make = SHAPES[shape]
    with pytest.raises(JSONDepthError, match=f"deeper than {MAX_JSON_DEPTH}"):
        loads_bounded(make(DEEP))
    with pytest.raises(ValueError):  # what callers that refuse bad JSON already catch
        loads_bounded(make(DEEP).encode("utf-16"))
    assert loads_bounded(make(MAX_JSON_DEPTH)) is not None  # the limit itself is allowed
    assert json_depth_exceeds(make(MAX_JSON_DEPTH + 1))


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({"content": "[" * DEEP}),  # brackets inside a string do not nest
        json.dumps({"content": '\\"' + "{" * DEEP}),  # nor after an escaped quote
        json.dumps(["\\", "[" * DEEP, {"x": "]" * DEEP}]),  # a string ending in a backslash
    ],
    ids=["in-string", "escaped-quote", "trailing-backslash"],
)
def test_brackets_inside_strings_are_not_nesting(text: str) -> None:
    assert loads_bounded(text) == json.loads(text)


def test_an_unterminated_string_is_left_to_the_parser() -> None:
    with pytest.raises(json.JSONDecodeError):  # brackets after the open quote are its text
        loads_bounded("[" * 50 + '"' + "[" * DEEP)


def test_deep_json_in_a_message_or_a_model_reply_is_plain_text() -> None:
    assert parse_json(_arrays(5_000)) is None  # a tool output or pasted text: not outlined
    assert parse_json('{"a": [1, 2]}') == {"a": [1, 2]}
    from pydantic import BaseModel

    class Reply(BaseModel):
        keep: bool

    parsed, why = parse_json_reply(_objects(5_000), Reply)
    assert parsed is None and "deeper than" in why


def test_a_message_may_hold_brackets_as_text(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text(json.dumps({"role": "user", "content": "[" * DEEP}) + "\n")
    (message,) = read_messages(path)
    assert message.text == "[" * DEEP


# --- the CLI --------------------------------------------------------------------------------


def _jsonl_with_deep_extra(n: int) -> str:
    ok = json.dumps({"role": "user", "content": "I moved to Utrecht in March."})
    return ok + "\n" + '{"role": "user", "content": "hi", "meta": ' + _objects(n) + "}\n"


def _jsonl_with_deep_content(n: int) -> str:
    return '{"role": "user", "content": ' + _arrays(n) + "}\n"


def _locomo_deep_turn(n: int) -> str:
    turn = '{"speaker": "A", "text": "hello", "blip": ' + _mixed(n) + "}"
    return '[{"sample_id": "s", "conversation": {"session_1": [' + turn + "]}}]"


FILES: dict[str, tuple[str, Callable[[int], str]]] = {
    "locomo-arrays": ("deep.json", _arrays),
    "locomo-objects": ("deep.json", _objects),
    "locomo-deep-turn": ("conv.json", _locomo_deep_turn),
    "jsonl-deep-extra-key": ("chat.jsonl", _jsonl_with_deep_extra),
    "jsonl-deep-content": ("chat.jsonl", _jsonl_with_deep_content),
}


@pytest.mark.parametrize("case", FILES)
def test_import_of_deep_json_exits_2_with_a_clear_message(case: str, tmp_path: Path) -> None:
    name, make = FILES[case]
    path = tmp_path / name
    path.write_text(make(DEEP))
    out = subprocess.run(
        [sys.executable, "-m", "agent.cli", "import", str(path), "--user", "u", "--no-progress"],
        cwd=REPO_ROOT, env=dict(os.environ), capture_output=True, text=True, timeout=180,
        check=False,
    )  # fmt: skip
    assert out.returncode == 2, out.stderr[-2000:]
    assert f"JSON nested deeper than {MAX_JSON_DEPTH} levels" in out.stderr
    assert "Traceback" not in out.stderr and str(path) in out.stderr


# --- the server, auth on ----------------------------------------------------------------------


@pytest.mark.e2e
async def test_deep_bodies_get_400_from_the_server(secured_server: LangGraphServer) -> None:
    who = Scope("acme", "nester")
    async with httpx.AsyncClient(base_url=secured_server.url, timeout=120) as http:
        for shape in SHAPES.values():
            for method, path in (("POST", "/memory/forget"), ("PATCH", f"/memory/memories/{ID}")):
                body = shape(5_000)  # under the 64 KB body limit, past Python's recursion limit
                answer = await http.request(
                    method, path, content=body,
                    headers={**bearer(who), "Content-Type": "application/json"},
                )  # fmt: skip
                assert answer.status_code == 400, (method, path, answer.status_code, answer.text)
                assert "nested deeper than" in answer.text
        # The server is still answering, and an ordinary body still works.
        answer = await http.post("/memory/forget", json={"confirm": False}, headers=bearer(who))
        assert answer.status_code == 400 and "confirm" in answer.text
