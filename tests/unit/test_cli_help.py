"""`memory-agent --help` speaks to users, not to the module's maintainers."""

from __future__ import annotations

from agent.cli import DESCRIPTION, build_parser


def test_help_describes_the_tool_not_its_implementation() -> None:
    text = build_parser().format_help()
    assert "command line" in DESCRIPTION and "embedded" in DESCRIPTION
    for internal in ("agent.commands", "module:function", "importing every command"):
        assert internal not in text
    for command in ("dev", "chat", "remember", "recall", "why", "forget", "import"):
        assert command in text
