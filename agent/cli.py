"""`memory-agent`: the command line; runs on the embedded stores unless URLs are set.

Subcommands are implemented in `agent.commands`; this module only parses arguments. Handlers
are named as "module:function" and imported after parsing, so `--help` and each command load
only what they use (importing every command took seconds).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import warnings
from collections.abc import Callable, Coroutine
from typing import Any

from memory.settings import ServiceLimits, Settings, SettingsError, apply_privacy_defaults

Handler = Callable[[argparse.Namespace], Coroutine[Any, Any, int]]

_BASIC = "agent.commands.basic"


def _scoped(parser: argparse.ArgumentParser, *, user_required: bool = True) -> None:
    default_tenant = os.environ.get("MEMORY_DEFAULT_TENANT", "default")
    parser.add_argument(
        "--tenant",
        default=default_tenant,
        help=f"tenant id (default: MEMORY_DEFAULT_TENANT or 'default'; now {default_tenant!r})",
    )
    parser.add_argument("--user", required=user_required, help="user id whose memory to use")


DESCRIPTION = (
    "The layered-memory-agent command line: run the agent (dev, chat) and inspect, correct and "
    "maintain its memory. Every command runs on the embedded Postgres and Chroma under .data/ "
    "unless DATABASE_URL / CHROMA_URL are set; settings are read from the environment and .env."
)
EPILOG = "`memory-agent COMMAND --help` describes a command; docs/operations.md lists them all."


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand."""
    parser = argparse.ArgumentParser(prog="memory-agent", description=DESCRIPTION, epilog=EPILOG)
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("dev", help="start langgraph dev (Studio) on the embedded stores")
    p.add_argument("--port", type=int, default=2025)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--no-browser", action="store_true")
    p.set_defaults(handler="agent.commands.dev:dev")

    p = sub.add_parser("chat", help="chat with the agent in the terminal")
    _scoped(p)
    p.add_argument("--thread", help="thread id to continue (default: a new thread)")
    p.set_defaults(handler="agent.commands.chat:chat")

    p = sub.add_parser("remember", help="store text through the memory gate, as the agent would")
    _scoped(p)
    p.add_argument("text", nargs="?", default="")
    p.add_argument("--image", metavar="PATH", help="remember an image (PNG, JPEG, GIF, WebP)")
    p.add_argument("--caption", default="", help="words describing the image")
    p.add_argument("--vision-model", default="", help="'provider:model' that describes it")
    p.add_argument("--json", action="store_true", help="print the decisions as JSON")
    p.set_defaults(handler=f"{_BASIC}:remember")

    p = sub.add_parser("mcp", help="serve the memory as MCP tools over stdio (for MCP clients)")
    _scoped(p)
    p.set_defaults(handler="agent.commands.mcp:mcp")

    p = sub.add_parser("recall", help="ranked memories of a user for a query")
    _scoped(p)
    p.add_argument("query")
    p.add_argument("-k", type=int, default=8)
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--explain",
        action="store_true",
        help="print each score's breakdown and relevance verdict (failing items included)",
    )
    p.set_defaults(handler=f"{_BASIC}:recall")

    p = sub.add_parser("gate", help="show the gate's decision for an utterance (stores nothing)")
    p.add_argument("text")
    p.add_argument("--role", default="user", choices=["user", "assistant", "tool", "system"])
    p.add_argument("--context", default=None, help="the message the utterance answers")
    p.add_argument("--reply", default=None, help="the reply the utterance got")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=f"{_BASIC}:gate")

    p = sub.add_parser("why", help="why a memory exists: its record and audit trail")
    _scoped(p)
    p.add_argument("memory_id")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=f"{_BASIC}:why")

    p = sub.add_parser(
        "restore",
        help="an update was wrong: make a replaced value current again (see its timeline in why)",
    )
    _scoped(p)
    p.add_argument("memory_id", help="the replaced memory to restore (a short id is enough)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=f"{_BASIC}:restore")

    p = sub.add_parser("reindex", help="index every memory not yet in Chroma")
    p.add_argument("--rebuild", action="store_true",
                   help="index every memory again (after changing MEMORY_CHROMA_SHARDS) and "
                   "drop the collections of the old layout")  # fmt: skip
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=f"{_BASIC}:reindex")

    p = sub.add_parser("consolidate", help="expire, forget, distil and merge memories (versioned)")
    p.add_argument("--user", help="user id to consolidate")
    p.add_argument("--all", action="store_true", help="every user, in batches, with progress")
    p.add_argument("--tenant", help="tenant of --user (or to limit --all to)")
    p.add_argument("--dry-run", action="store_true", help="report, change nothing")
    p.add_argument("--batch-size", type=int, default=50, help="users per batch (default 50)")
    p.add_argument("--model", help="'provider:model' to distil with a model (default: rules)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler="agent.commands.consolidate:consolidate")

    p = sub.add_parser("rollback", help="undo a consolidation run exactly (Postgres and Chroma)")
    p.add_argument("run_id")
    p.add_argument("--user", help="only this user's part of the run")
    p.add_argument("--tenant", help="tenant of --user (default MEMORY_DEFAULT_TENANT)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler="agent.commands.consolidate:rollback_run")

    from agent.commands import importer, privacy, stats

    privacy.register(sub)  # forget, export
    stats.register(sub)
    importer.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the process exit code."""
    # platformdirs warns on every command where XDG_RUNTIME_DIR is unset (containers, SSH) and
    # falls back to a sound default: nothing for the user to act on.
    warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")
    apply_privacy_defaults()
    _load_dotenv()
    args = build_parser().parse_args(argv)
    try:  # every setting read once before any work: a bad one is one line, not a traceback
        Settings.from_env()
        ServiceLimits.from_env()
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    handler = _resolve(args.handler)
    try:
        return asyncio.run(handler(args))
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # one clear line instead of a traceback for expected failures
        from agent.commands import expected_errors

        if isinstance(exc, expected_errors()):
            from agent.commands.output import say

            say(f"error: {exc}", file=sys.stderr)  # it may quote stored text
            return 2
        raise


def _resolve(handler: Handler | str) -> Handler:
    if not isinstance(handler, str):
        return handler
    import importlib

    module, _, name = handler.partition(":")
    resolved: Handler = getattr(importlib.import_module(module), name)
    return resolved


def _load_dotenv() -> None:
    # `.env` in the working directory, if any; real environment variables win.
    try:
        from dotenv import load_dotenv
    except ImportError:  # pragma: no cover - installed with langgraph-cli
        return
    load_dotenv(override=False)


if __name__ == "__main__":
    sys.exit(main())
