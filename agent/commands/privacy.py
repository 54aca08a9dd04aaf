"""`memory-agent forget` and `memory-agent export`: a user's right to erasure and to their data.

`forget` deletes the user's memories (Postgres and Chroma), versions, audit trail, profile and
consent, and the checkpoints of their threads, then prints the receipt. It works on the database
directly; a running `langgraph dev` keeps its own thread registry, which `POST /memory/forget`
(the HTTP route) also clears. `forget --memory ID` deletes one memory the same way
(`memory.storage.forget_one`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.commands.output import print_json, say

if TYPE_CHECKING:
    from memory.types import Scope

# The memory modules are imported inside the commands: the CLI imports this module to build its
# parser, for every command.


def _scoped(parser: argparse.ArgumentParser) -> None:
    tenant = os.environ.get("MEMORY_DEFAULT_TENANT", "default")
    parser.add_argument("--tenant", default=tenant, help=f"tenant id (default: {tenant!r})")
    parser.add_argument("--user", required=True, help="user id")


def register(subparsers: Any) -> None:
    """Add `forget` and `export` to the CLI's subparsers."""
    p = subparsers.add_parser("forget", help="delete everything of a user; prints a receipt")
    _scoped(p)
    p.add_argument("--memory", metavar="ID", help="delete only this memory (everywhere it went)")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.add_argument("--json", action="store_true", help="print the receipt as JSON")
    p.set_defaults(handler=forget)

    p = subparsers.add_parser("export", help="a user's memories, profile and audit trail as JSON")
    _scoped(p)
    p.add_argument("--out", type=Path, help="write to this file instead of stdout")
    p.set_defaults(handler=export)


def _confirmed(scope: Scope) -> bool:
    if not sys.stdin.isatty():
        say("error: refusing to forget without --yes (stdin is not a terminal)", file=sys.stderr)
        return False
    answer = input(f"Delete ALL data of {scope.key}? Type the user id to confirm: ")
    return answer.strip() == scope.user_id


async def _forget_one(scope: Scope, memory_id: str, *, as_json: bool) -> int:
    from memory.storage.forget_one import delete_memory
    from memory.storage.store import open_store

    async with open_store() as store:
        memory_id = await store.resolve_id(scope, memory_id)
        receipt = await delete_memory(store, scope, memory_id, reason="deleted via CLI")
    if as_json:
        print_json(receipt)
    if not receipt["memories"]:
        say(f"error: {scope.key} has no memory {memory_id}", file=sys.stderr)
        return 1
    if not as_json:
        removed = ", ".join(f"{k} {v}" for k, v in receipt.items() if isinstance(v, int) and v)
        say(f"forgot memory {memory_id} of {scope.key}" + (f": {removed}" if removed else ""))
    if receipt.get("chroma_pending"):
        say(
            "pending: Chroma did not answer; the index entry is queued and deleted when it "
            "does (at the next start, reindex or write)",
            file=sys.stderr,
        )
    return 0


async def forget(args: argparse.Namespace) -> int:
    """Delete everything of one user (or one memory with --memory) and print the receipt."""
    from memory.storage.forget import ForgetIncompleteError, forget_user
    from memory.storage.store import open_store
    from memory.types import Scope

    scope = Scope(args.tenant, args.user)
    if args.memory:
        return await _forget_one(scope, args.memory, as_json=args.json)
    if not args.yes and not _confirmed(scope):
        return 1
    async with open_store() as store:
        try:
            receipt = await forget_user(store, scope)
        except ForgetIncompleteError as exc:
            say(f"error: {exc}", file=sys.stderr)
            if args.json:
                print_json(exc.receipt.as_dict())
            return 3
    if args.json:
        print_json(receipt.as_dict())
        return 0
    say(f"forgot {scope.key}: {receipt.total} rows/entries removed")
    for name, count in sorted(receipt.counts.items()):
        say(f"  {name:<36} {count:>8}")
    if receipt.vacuumed:
        say(f"vacuumed: {', '.join(receipt.vacuumed)}")
    elif receipt.compaction == "deferred":
        say(f"VACUUM and CHECKPOINT: within {receipt.compaction_within_s:g} s (coalesced)")
    if "server_thread" in receipt.pending:
        say(
            "pending: the LangGraph server's own thread records; a running server deletes them "
            "before it answers its next thread or run request (or use POST /memory/forget)"
        )
    say("out of reach of any deletion:")
    for line in receipt.unreachable:
        say(f"  - {line}")
    return 0


async def export(args: argparse.Namespace) -> int:
    """Print (or write) everything kept about one user as JSON."""
    from memory.storage.export import export_user
    from memory.storage.store import open_store
    from memory.types import Scope

    scope = Scope(args.tenant, args.user)
    async with open_store() as store:
        data = await export_user(store, scope)
    if args.out is None:
        print_json(data)
        return 0
    args.out.write_text(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")
    say(f"exported {len(data['memories'])} memories of {scope.key} to {args.out}")
    return 0


__all__ = ["export", "forget", "register"]
