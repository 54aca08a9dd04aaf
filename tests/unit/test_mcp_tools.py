"""The MCP tools' contract, in process with the SDK's client: schemas, identity, bad input.

Bad input must be refused before the store is touched, so the store here refuses to open.
"""

from __future__ import annotations

from mcp.client.client import Client

from agent.mcp_server import build_server
from agent.mcp_writes import WriteRunner
from memory.storage.store import MemoryStore
from memory.types import Scope
from tests.support.mcp_client import text_of


async def _no_store() -> MemoryStore:
    raise AssertionError("bad input reached the store")


def _client() -> Client:
    runner = WriteRunner(_no_store, "")
    server = build_server(_no_store, lambda _ctx: Scope("acme", "u"), runner, via="test")
    return Client(server)


async def test_tools_are_typed_described_and_take_no_identity() -> None:
    async with _client() as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {"remember", "write_status", "recall", "forget", "list_memories",
                          "why", "forget_me"}  # fmt: skip
    for tool in tools.values():
        assert tool.description
        props = tool.input_schema.get("properties", {})
        assert not {"user", "user_id", "tenant", "tenant_id", "scope"} & set(props), tool.name
        assert all(p.get("description") for p in props.values()), tool.name
    assert tools["recall"].input_schema["properties"]["k"]["maximum"] == 20
    assert tools["forget_me"].annotations is not None
    assert tools["forget_me"].annotations.destructive_hint is True


async def test_bad_input_is_one_clear_error_and_touches_nothing() -> None:
    async with _client() as client:
        cases = [
            ("remember", {"text": "   "}, "text is empty"),
            ("remember", {"text": "x" * 8_001}, "text is 8,001 characters; at most 8,000"),
            ("remember", {"text": "a\x00b"}, "text contains a NUL character"),
            ("recall", {"query": "q", "k": 0}, "k"),
            ("recall", {"query": "q" * 2_001}, "at most 2,000"),
            ("forget", {"memory_id": ""}, "memory_id is empty"),
            ("forget_me", {"confirm": "yes"}, "nothing deleted"),
        ]
        for name, args, message in cases:
            result = await client.call_tool(name, args)
            assert result.is_error, (name, args)
            assert message in text_of(result), (name, text_of(result))
            assert "Traceback" not in text_of(result)
