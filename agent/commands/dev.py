"""`memory-agent dev`: langgraph dev (Studio) on the embedded stores, no servers to install."""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys

from memory.settings import Settings, apply_privacy_defaults
from memory.storage.pg import database_url


async def dev(args: argparse.Namespace) -> int:
    """Start the embedded Postgres, then run `langgraph dev` against it."""
    apply_privacy_defaults()
    settings = Settings.from_env()
    # Start (or join) the embedded database here so the server and its checkpointer share it.
    os.environ["DATABASE_URL"] = await asyncio.to_thread(database_url, settings)
    exe = shutil.which("langgraph") or os.path.join(os.path.dirname(sys.executable), "langgraph")
    cmd = [exe, "dev", "--host", args.host, "--port", str(args.port), "--no-reload"]
    if args.no_browser:
        cmd.append("--no-browser")
    print(f"memory inspector: http://{args.host}:{args.port}/memory/ui", flush=True)
    proc = await asyncio.create_subprocess_exec(*cmd)
    try:
        return await proc.wait()
    finally:
        if proc.returncode is None:
            proc.terminate()
            await proc.wait()
