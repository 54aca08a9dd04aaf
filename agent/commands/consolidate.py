"""consolidate / rollback: run the consolidate graph locally, or undo one of its runs."""

from __future__ import annotations

import argparse
import os
from typing import Any

from tqdm import tqdm

from agent.commands.output import print_json, say
from agent.consolidate_graph import RECURSION_LIMIT, ConsolidateInput, build_graph
from memory.longterm.consolidation import RollbackConflict, UnknownRun, rollback
from memory.storage.consolidation_runs import count_scopes
from memory.storage.store import MemoryStore, open_store
from memory.storage.user_locks import RunBusy
from memory.types import Scope


def _graph_input(args: argparse.Namespace) -> ConsolidateInput:
    data: ConsolidateInput = {"dry_run": bool(args.dry_run), "batch_size": args.batch_size}
    if args.all:
        data["all"] = True
        if args.tenant:
            data["tenant_id"] = args.tenant
    else:
        data["user_id"] = args.user
        data["tenant_id"] = args.tenant or os.environ.get("MEMORY_DEFAULT_TENANT", "default")
    if args.model:
        data["model"] = args.model
    return data


async def _run(store: MemoryStore, data: ConsolidateInput, bar: tqdm[Any]) -> dict[str, Any]:
    config: Any = {"configurable": {"memory_store": store}, "recursion_limit": RECURSION_LIMIT}
    result: dict[str, Any] = {"dry_run": data.get("dry_run", False), "users": 0, "counts": {}}
    async for update in build_graph().compile().astream(data, config, stream_mode="updates"):
        for node, values in update.items():
            if node == "begin" and values:
                result["run_id"] = values["run_id"]
            elif node == "finish" and values:
                result.update(values)
                bar.update(int(values["users"]) + len(values["skipped"]) - bar.n)
    return result


async def consolidate(args: argparse.Namespace) -> int:
    """Consolidate one user (--user) or all users (--all, with a progress bar)."""
    if bool(args.all) == bool(args.user):
        say("error: give either --user USER or --all")
        return 2
    data = _graph_input(args)
    async with open_store() as store:
        total = await count_scopes(store.pool, tenant=data.get("tenant_id")) if args.all else 1
        with tqdm(total=total, unit="user", disable=not args.all or args.json) as bar:
            result = await _run(store, data, bar)
    if args.json:
        print_json(result)
    else:
        _print(result)
    return 1 if result.get("errors") else 0


def _print(result: dict[str, Any]) -> None:
    label = " (dry run: nothing was changed)" if result["dry_run"] else ""
    say(f"run {result.get('run_id', '-')}{label}: {result['users']} user(s)")
    counts = ", ".join(f"{k} {v}" for k, v in result["counts"].items())
    say(f"  {counts or 'nothing to do'}")
    for key in ("skipped", "recovered", "errors"):
        if result.get(key):
            say(f"  {key}: {', '.join(result[key])}")
    if result["dry_run"]:
        for d in result.get("decisions", []):
            say(f"  [{d['step']}] {d['action']} {d['memory_id'][:8]}: {d['reason']}")


async def rollback_run(args: argparse.Namespace) -> int:
    """Restore the state before a consolidation run (for every user it touched, or one)."""
    scope = Scope(args.tenant or os.environ.get("MEMORY_DEFAULT_TENANT", "default"), args.user) \
        if args.user else None  # fmt: skip
    async with open_store(reindex_on_start=False) as store:
        try:
            report = await rollback(store, args.run_id, scope=scope, reason="requested via CLI")
        except (RollbackConflict, RunBusy, UnknownRun) as exc:
            say(f"error: {exc}")
            return 2
    if args.json:
        print_json({"run_id": report.run_id, "users": report.users, "restored": report.restored,
                    "deleted": report.deleted, "already_rolled_back": report.already})  # fmt: skip
        return 0
    say(f"rolled back run {report.run_id}: {report.users} user(s), {report.restored} memories "
          f"restored, {report.deleted} created memories removed")  # fmt: skip
    if report.already:
        say(f"  already rolled back: {', '.join(report.already)}")
    return 0
