"""Terminal control sequences a user stores never act on the operator's terminal.

A user's text (a chat turn, an MCP `remember`, a store put) is printed by the CLI to the
operator: ESC and C1 sequences there rewrite or hide lines (forging what `why` or `recall`
shows), set the window title, or write the clipboard (OSC 52). The write path drops them
(`citations.neutralise`, which the gate and the store apply), and the CLI shows any that an
older row still holds as visible escapes (`agent.commands.output.say`).
"""

from __future__ import annotations

import asyncio
import io
import json
import re
from contextlib import redirect_stdout

import asyncpg

from agent.commands.output import print_json, say, terminal_safe
from memory.citations import neutralise
from memory.gating.gate import gate
from tests.integration.test_cli import _chat, _cli, env
from tests.support.ports import REPO_ROOT

__all__ = ["env"]

HOSTILE = "I prefer green tea \x1b]0;PWNED-TITLE\x07\x1b[2K\x1b[1A over coffee"
# What no terminal output may hold: C0 controls but tab and newline, DEL, C1.
_ACTS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def test_the_write_path_drops_terminal_sequences_and_keeps_lines() -> None:
    assert neutralise(HOSTILE) == "I prefer green tea  over coffee"
    clip = "note\x1b]52;c;cm0gLXJmIH4=\x1b\\ done \x9b31mred\x9b0m"
    assert neutralise(clip) == "note done red"
    assert neutralise("one\r\ntwo\rthree\x0bfour\tfive\n") == "one\ntwo\nthree\nfour\tfive\n"
    assert neutralise("a lone \x1b and \x85 and \x7f go") == "a lone  and  and  go"
    for text in (HOSTILE, clip):
        assert neutralise(neutralise(text)) == neutralise(text)
    decision = gate(HOSTILE, role="user")
    assert decision.keep and not _ACTS.search(decision.content), decision.content


def test_cli_output_shows_controls_as_escapes() -> None:
    assert terminal_safe("a\x1b[2Kb\x9bc\td\ne\x00") == "a\\x1b[2Kb\\x9bc\td\ne\\x00"
    out = io.StringIO()
    with redirect_stdout(out):
        say("title:", "\x1b]0;x\x07", end="\n")
        print_json({"content": "x\x1b\x9b\x7fy"})
    text = out.getvalue()
    assert not _ACTS.search(text), repr(text)
    assert json.loads(text.split("\n", 1)[1]) == {"content": "x\x1b\x9b\x7fy"}


def test_every_cli_command_prints_through_say() -> None:
    # One helper for all human-readable output: a bare print() would print stored text raw.
    bare = re.compile(r"(?<![\w.])print\(")
    for path in sorted((REPO_ROOT / "agent" / "commands").glob("*.py")):
        if path.name == "output.py":
            continue
        lines = [n for n, line in enumerate(path.read_text().splitlines(), 1) if bare.search(line)]
        assert not lines, f"{path.name} prints without say() at lines {lines}"


async def _taint(url: str, memory_id: str, extra: str) -> None:
    """What an older row (stored before the write path dropped controls) may hold."""
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(
            "UPDATE memories SET content = content || $2 WHERE id = $1", memory_id, extra
        )
    finally:
        await conn.close()


def test_control_sequences_never_reach_the_operators_terminal(env: dict[str, str]) -> None:
    out = _cli(env, "remember", HOSTILE, "--user", "esc-u")
    assert out.returncode == 0, out.stderr
    assert not _ACTS.search(out.stdout), repr(out.stdout)
    asked = ("recall", "which tea do I prefer?", "--user", "esc-u")
    [hit] = json.loads(_cli(env, *asked, "--json").stdout)
    assert hit["content"] == "I prefer green tea  over coffee"  # stored without them

    extra = " \x1b]0;PWNED-TITLE\x07\x1b[2K\x1b[1A\x9b2K"
    asyncio.run(_taint(env["DATABASE_URL"], hit["id"], extra))
    for args in (asked, ("why", hit["id"], "--user", "esc-u")):
        out = _cli(env, *args)
        assert out.returncode == 0, out.stderr
        assert not _ACTS.search(out.stdout), repr(out.stdout)
        assert "\\x1b]0;PWNED-TITLE\\x07\\x1b[2K" in out.stdout, out.stdout
    [hit] = json.loads(_cli(env, *asked, "--json").stdout)
    assert hit["content"].endswith(extra)  # JSON escapes them, and keeps the value
    out = _chat(env, "esc-u", "/memories", "/quit")
    assert out.returncode == 0, out.stderr
    assert not _ACTS.search(out.stdout), repr(out.stdout)
    assert "\\x1b]0;PWNED-TITLE" in out.stdout
