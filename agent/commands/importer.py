"""`memory-agent import FILE`: bulk import of past conversations, resumable.

JSONL (one message per line: {"role", "content", optional "timestamp", "thread_id",
"speaker"}) or a LoCoMo-style conversation file. Messages go through the memory gate (or are
stored one memory per message with --raw), in batches, with a progress bar; rerunning the same
command after an interruption continues where the last completed batch ended.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from agent.commands.output import print_json, say


def register(subparsers: Any) -> None:
    """Add `import` to the CLI's subparsers."""
    p = subparsers.add_parser("import", help="import past conversations (JSONL or LoCoMo file)")
    p.add_argument("file", type=Path)
    p.add_argument(
        "--tenant",
        default=os.environ.get("MEMORY_DEFAULT_TENANT", "default"),
        help="tenant id (default: MEMORY_DEFAULT_TENANT or 'default')",
    )
    p.add_argument("--user", required=True, help="user id the history belongs to")
    p.add_argument("--format", choices=("auto", "jsonl", "locomo"), default="auto")
    p.add_argument(
        "--raw",
        action="store_true",
        help="store every message as a memory (secrets still redacted) instead of gating",
    )
    p.add_argument("--batch-size", type=int, default=256, help="messages per write (default 256)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(handler=import_history)


async def import_history(args: argparse.Namespace) -> int:
    """Read the file, then gate/embed/write it in batches for one user."""
    from tqdm import tqdm

    from memory.gating.ingest.history import (
        ImportFileError,
        file_digest,
        import_messages,
        read_messages,
    )
    from memory.storage.store import open_store
    from memory.types import Scope

    if args.batch_size < 1:
        say("error: --batch-size must be at least 1", file=sys.stderr)
        return 2
    try:
        messages = read_messages(args.file, args.format)
        source = file_digest(args.file)
    except ImportFileError as exc:
        say(f"error: {exc}", file=sys.stderr)
        return 2
    scope = Scope(args.tenant, args.user)
    bar = tqdm(
        total=len(messages), unit="msg", desc="import", disable=args.no_progress, file=sys.stderr
    )
    with bar:
        async with open_store() as store:
            report = await import_messages(
                store,
                scope,
                messages,
                source=source,
                gated=not args.raw,
                batch_size=args.batch_size,
                progress=bar.update,
            )
    summary = {
        "file": str(args.file),
        "messages": report.messages,
        "already_imported": report.skipped_done,
        "stored": report.stored,
        "dropped": report.dropped,
        "seconds": round(report.seconds, 2),
        "memories_per_s": round(report.per_second, 1),
        "reasons": report.reasons,
    }
    if args.json:
        print_json(summary)
    else:
        say(
            f"imported {args.file}: {report.stored} memories stored, {report.dropped} dropped, "
            f"{report.skipped_done} already imported, of {report.messages} messages "
            f"({report.per_second:.0f} memories/s)"
        )
    return 0
