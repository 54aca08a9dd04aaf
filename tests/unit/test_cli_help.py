"""`memory-agent --help` speaks to users, not to the module's maintainers."""

from __future__ import annotations

import asyncio
import io

import pytest

from agent.cli import DESCRIPTION, build_parser


def test_help_describes_the_tool_not_its_implementation() -> None:
    text = build_parser().format_help()
    assert "command line" in DESCRIPTION and "embedded" in DESCRIPTION
    for internal in ("agent.commands", "module:function", "importing every command"):
        assert internal not in text
    for command in ("dev", "chat", "remember", "recall", "why", "forget", "import"):
        assert command in text


async def test_the_spinner_has_wiped_its_line_when_the_reply_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agent.commands.chat import _spinner

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    err = Terminal()
    monkeypatch.setattr("sys.stderr", err)
    async with _spinner("recalling…") as stop:
        await asyncio.sleep(0.25)
        await stop()
        # What the reply prints next starts on a clean line: the wipe is already written.
        assert err.getvalue().endswith("\r" + " " * len("  recalling…") + "\r")
