"""`memory-agent mcp --user U`: the memory MCP server over stdio, for desktop and IDE clients.

stdout carries the protocol, so nothing else may print there (logs go to stderr). The user is
the operator's `--user`: the process runs on the operator's machine with the operator's stores,
like every other CLI command.
"""

from __future__ import annotations

import argparse


async def mcp(args: argparse.Namespace) -> int:
    """Serve the memory tools over stdio until the client closes the stream."""
    from agent.mcp_server import build_server
    from agent.mcp_writes import WriteRunner, gate_model_spec
    from memory.storage.store import MemoryStore, open_store
    from memory.types import Scope

    scope = Scope(args.tenant, args.user)
    async with open_store() as store:

        async def get_store() -> MemoryStore:
            return store

        runner = WriteRunner(get_store, gate_model_spec())
        server = build_server(get_store, lambda _ctx: scope, runner, via="mcp-stdio")
        async with runner.resuming():
            await server.run_stdio_async()
            # Writes still running finish before the store closes; one cut short by a kill
            # is finished by the next process (its row waits in pending_writes).
            await runner.drain()
    return 0
