"""`memory-agent chat`: the agent in a terminal, on the server's checkpointer and stores.

The reply streams token by token; a spinner shows while perceive/recall/compose run (only on a
terminal); log lines go to a file, not between the turns. Slash commands inspect and edit the
user's memory without leaving the chat: /memories, /why ID, /forget ID, /help, /quit.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import logging
import os
import sys
import threading
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from agent.commands.output import say

HELP = """commands:
  /memories      list what I remember about you (newest first)
  /why ID        a memory and its audit trail (ID: the 8 characters shown in [mem:...])
  /forget ID     delete one memory everywhere it went
  /help          this help
  /quit          leave (Ctrl-D works too)"""

_SPIN = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def _ask(prompt: str) -> str | None:
    if sys.stdin.isatty() and sys.stdout.isatty():
        try:
            return input(prompt)  # the terminal's line editing
        except EOFError:
            return None
    # Piped: unbuffered reads, since a reader thread left waiting when Ctrl-C ends the chat
    # must hold no lock of sys.stdin's buffer (the interpreter aborts on one at exit).
    sys.stdout.write(prompt)
    sys.stdout.flush()
    raw = sys.stdin.buffer.raw.readline()  # type: ignore[union-attr]
    if not raw:
        return None
    return str(raw.decode(sys.stdin.encoding or "utf-8", "replace").rstrip("\r\n"))


async def _read_line(prompt: str) -> str | None:
    """`_ask` without blocking the loop, in a daemon thread of its own.

    Not `asyncio.to_thread`: Ctrl-C cancels the chat, and asyncio.run's shutdown then waits for
    its executor's threads, one of which sits in `input()` until Enter, so Ctrl-C did nothing.
    """
    loop = asyncio.get_running_loop()
    line: asyncio.Future[str | None] = loop.create_future()

    def deliver(text: str | None) -> None:
        if not line.done():  # cancelled by Ctrl-C meanwhile
            line.set_result(text)

    def read() -> None:
        loop.call_soon_threadsafe(deliver, _ask(prompt))

    threading.Thread(target=read, name="chat-input", daemon=True).start()
    return await line


def _answer_interrupt(value: Any) -> Any:
    """Show an interrupt (brake or approval) and read the human's answer."""
    if isinstance(value, dict) and value.get("type") == "memory_approval":
        for m in value.get("memories", []):
            say(f"  needs approval: {m['content']!r} ({m['reason']})")
        return "approve" if (_ask("approve? [y/N] ") or "").lower().startswith("y") else "reject"
    say(f"  brake: {value.get('reason') if isinstance(value, dict) else value}")
    go_on = (_ask("continue the task? [y/N] ") or "").lower().startswith("y")
    return "continue" if go_on else "stop"


def _logs_to_file(data_dir: Path, verbose: bool) -> Path | None:
    """Send log records to a file so they never land between the chat's lines."""
    if verbose:
        return None
    path: Path | None = data_dir / "logs" / "chat.log"
    handler: logging.Handler
    try:
        assert path is not None
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(path, encoding="utf-8")
    except OSError:
        handler, path = logging.NullHandler(), None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    logging.captureWarnings(True)
    return path


@contextlib.asynccontextmanager
async def _spinner(text: str) -> AsyncIterator[Callable[[], Awaitable[None]]]:
    """Spin on stderr until the yielded `stop()` returns (no-op when stderr is not a terminal).

    `stop()` waits until the spinner has wiped its line, so the reply never starts after it.
    """
    done = asyncio.Event()

    async def spin() -> None:
        for frame in itertools.cycle(_SPIN):
            sys.stderr.write(f"\r{frame} {text}")
            sys.stderr.flush()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), 0.1)
                break
        sys.stderr.write("\r" + " " * (len(text) + 2) + "\r")
        sys.stderr.flush()

    task = asyncio.create_task(spin()) if sys.stderr.isatty() else None

    async def stop() -> None:
        done.set()
        if task is not None:
            await task

    try:
        yield stop
    finally:
        await stop()


async def _turn(graph: Any, payload: Any, config: dict[str, Any], ctx: Any) -> Any:
    """Stream one run: print the reply's tokens as they come; return a pending interrupt."""
    from langchain_core.messages import AIMessage

    pending = None
    printed = False
    async with _spinner("recalling…") as stop_spinner:
        async for mode, data in graph.astream(
            payload, config, context=ctx, stream_mode=["messages", "updates"]
        ):
            if mode == "updates" and isinstance(data, dict) and "__interrupt__" in data:
                pending = data["__interrupt__"][0].value
            if mode != "messages":
                continue
            message, meta = data
            if meta.get("langgraph_node") != "respond" or not isinstance(message, AIMessage):
                continue
            text = message.text
            if not text:
                continue
            if not printed:
                await stop_spinner()
                say("agent> ", end="")
                printed = True
            # Chunks from a streaming model, or the whole message from one that does not.
            say(text, end="", flush=True)
    if printed:
        say()
    return pending


async def _resolve(store: Any, scope: Any, given: str) -> str | None:
    """The full id of this user's memory that `given` (a short id, `mem:` allowed) names."""
    from memory.storage.store import AmbiguousIdError

    want = given.strip().removeprefix("mem:")
    try:
        memory_id: str = await store.resolve_id(scope, want)
    except AmbiguousIdError:
        return None
    return memory_id if await store.get(scope, memory_id) is not None else None


async def _command(line: str, scope: Any) -> None:
    from agent.resources import get_store
    from memory.storage.forget_one import delete_memory

    name, _, arg = line.strip().partition(" ")
    if name == "/help":
        say(HELP)
        return
    store = await get_store()
    if name == "/memories":
        records = await store.list_memories(scope, limit=50)
        if not records:
            say("  (no memories yet)")
        for r in records:
            short = r.id.replace("-", "")[:8]
            say(f"  [{short} · {r.occurred_at.date()} · {r.kind.value}] {r.content}")
        return
    if name not in ("/why", "/forget") or not arg.strip():
        say(f"  unknown command {line.strip()!r}; /help lists them")
        return
    memory_id = await _resolve(store, scope, arg)
    if memory_id is None:
        say(f"  no single memory of yours matches {arg.strip()!r} (see /memories)")
        return
    if name == "/why":
        record = await store.get(scope, memory_id)
        if record is not None:
            say(f"  {record.id} [{record.status.value}] {record.kind.value}: {record.content}")
        for e in await store.events(scope, memory_id):
            say(f"  {e['at']:%Y-%m-%d %H:%M:%S} {e['event']}: {e['reason']}")
        return
    receipt = await delete_memory(store, scope, memory_id, reason="deleted in chat")
    say(f"  forgot {memory_id}" if receipt.get("memories") else "  nothing was deleted")


async def chat(args: argparse.Namespace) -> int:
    """Read lines from stdin and answer them until EOF or /quit."""
    from langgraph.types import Command

    from agent.checkpointer import open_checkpointer
    from agent.context import Context
    from agent.graph import build_graph
    from agent.model import is_memory_only, load_chat_model
    from agent.resources import close_stores
    from memory.settings import Settings
    from memory.storage.pg import release_embedded_databases
    from memory.types import Scope

    ctx = Context(tenant_id=args.tenant, user_id=args.user)
    scope = Scope(ctx.tenant_id, ctx.user_id)
    load_chat_model(ctx.model)  # fail now, clearly, rather than after the first message
    log_file = _logs_to_file(Settings.from_env().data_dir, bool(getattr(args, "verbose", False)))
    thread = args.thread or uuid.uuid4().hex
    say(f"thread {thread} (continue it with --thread {thread}); /help for commands")
    say(
        f"as user {ctx.user_id!r} of tenant {ctx.tenant_id!r} (in Studio: user_id in the "
        "context; in the inspector: sign in as this user)"
    )
    if is_memory_only(ctx.model):
        say("memory-only mode: no chat model is set (MEMORY_AGENT_MODEL); replies list recalls")
    if log_file is not None:
        say(f"logs: {log_file}")
    interrupted = False
    try:
        async with open_checkpointer() as saver:
            graph = build_graph().compile(checkpointer=saver)
            config: dict[str, Any] = {"configurable": {"thread_id": thread}}
            while (line := await _read_line("you> ")) is not None:
                text = line.strip()
                if not text:
                    continue
                if text in ("/quit", "/exit"):
                    break
                if text.startswith("/"):
                    await _command(text, scope)
                    continue
                payload: Any = {"messages": [("user", line)]}
                while (pending := await _turn(graph, payload, config, ctx)) is not None:
                    payload = Command(resume=_answer_interrupt(pending))
    except asyncio.CancelledError:  # Ctrl-C
        interrupted = True
    finally:
        if interrupted:
            # Bounded: a user who pressed Ctrl-C is not kept waiting on a slow shutdown.
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(close_stores(), timeout=5)
        else:
            await close_stores()
    if interrupted:
        # Leave the shell's prompt on a line of its own, and leave now: the reader thread is
        # still blocked on stdin, and an interpreter shutdown racing it could abort.
        say()
        release_embedded_databases()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    sys.stdout.flush()
    return 0
