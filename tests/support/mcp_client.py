"""Helpers for driving the memory MCP server with the `mcp` SDK's own client."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import CallToolResult, TextContent

from tests.support.ports import REPO_ROOT, child_env


def stdio_client(user: str, env: dict[str, str], tenant: str = "acme") -> Client:
    """An SDK client that starts `memory-agent mcp --user USER` as its stdio server."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agent.cli", "mcp", "--tenant", tenant, "--user", user],
        env=child_env(env),
        cwd=Path(REPO_ROOT),
    )
    return Client(params)


def text_of(result: CallToolResult) -> str:
    """The text blocks of a tool result, joined."""
    return "\n".join(b.text for b in result.content if isinstance(b, TextContent))


def data_of(result: CallToolResult) -> dict[str, Any]:
    """The structured content of a successful tool result."""
    assert not result.is_error, text_of(result)
    assert isinstance(result.structured_content, dict)
    return result.structured_content


__all__ = ["data_of", "stdio_client", "text_of"]
