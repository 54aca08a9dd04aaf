"""`memory-agent dev`: langgraph dev (Studio) on the embedded stores, no servers to install.

Ctrl-C stops it cleanly: the terminal sends SIGINT to the whole process group, so the server
gets it too and shuts down on its own while this process waits; signalling it a second time
would make it abort mid-shutdown (with tracebacks). A signal sent to this process alone (a
process manager's SIGTERM) is passed on after a grace period. The embedded PostgreSQL this
process started stops when the server has exited.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import signal
import socket
import sys

from filelock import FileLock, Timeout

from agent.commands.output import say
from memory.settings import Settings, apply_privacy_defaults
from memory.storage.pg import database_url, open_pool, release_embedded_databases

# Seconds the server gets to stop on the signal it received itself before it is sent one.
_GRACE_S = 10.0
_KILL_AFTER_S = 20.0


async def _stop(proc: asyncio.subprocess.Process, waiting: asyncio.Task[int], sig: int) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(waiting), _GRACE_S)
        return
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(sig)
    try:
        await asyncio.wait_for(asyncio.shield(waiting), _KILL_AFTER_S)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()


def _port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


async def dev(args: argparse.Namespace) -> int:
    """Start the embedded Postgres, then run `langgraph dev` against it."""
    apply_privacy_defaults()
    settings = Settings.from_env()
    if not _port_free(args.host, args.port):
        # langgraph would pick another port silently while this printed the old address.
        say(
            f"error: port {args.port} on {args.host} is in use (another `memory-agent dev`?); "
            "stop it or pass --port",
            file=sys.stderr,
        )
        return 2
    # A second server on the same embedded data would share its Chroma files with the first,
    # which embedded Chroma does not allow: refuse it while the first holds the lock.
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(settings.data_dir / ".memory-agent-dev.lock"), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        say(
            f"error: another `memory-agent dev` serves the data in {settings.data_dir}; "
            "stop it, or give this one its own MEMORY_DATA_DIR",
            file=sys.stderr,
        )
        return 2
    try:
        return await _serve(args, settings)
    finally:
        lock.release()


async def _serve(args: argparse.Namespace, settings: Settings) -> int:
    # Start (or join) the embedded database here so the server and its checkpointer share it.
    os.environ["DATABASE_URL"] = await asyncio.to_thread(database_url, settings)
    # Reach the database here: the server would otherwise fail its startup with a traceback.
    async with open_pool(os.environ["DATABASE_URL"], min_size=1, max_size=1):
        pass
    exe = shutil.which("langgraph") or os.path.join(os.path.dirname(sys.executable), "langgraph")
    cmd = [exe, "dev", "--host", args.host, "--port", str(args.port)]
    if args.no_browser:
        cmd.append("--no-browser")
    loop = asyncio.get_running_loop()
    received: list[int] = []
    stopping = asyncio.Event()

    def on_signal(sig: int) -> None:
        received.append(sig)
        stopping.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal, sig)
    say(f"memory inspector: http://{args.host}:{args.port}/memory/ui", flush=True)
    say(
        "Studio runs as user 'local-dev' unless the run's context sets user_id: memories made "
        "with `memory-agent chat --user NAME` show there with user_id NAME, and in the "
        "inspector when you sign in as NAME",
        flush=True,
    )
    try:
        proc = await asyncio.create_subprocess_exec(*cmd)
        waiting = asyncio.create_task(proc.wait())
        stop = asyncio.create_task(stopping.wait())
        await asyncio.wait({waiting, stop}, return_when=asyncio.FIRST_COMPLETED)
        stop.cancel()
        if not waiting.done():
            await _stop(proc, waiting, received[0])
        code = await waiting
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await asyncio.to_thread(release_embedded_databases)
    # Stopped on request: a clean exit, whatever code the server's own signal handling left.
    return 0 if received else code
