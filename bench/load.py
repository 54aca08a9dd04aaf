"""Load test: N concurrent users for T seconds against `langgraph dev` with the stub model.

    python -m bench.load                      # starts Postgres, the stub and langgraph dev itself
    python -m bench.load --url URL --stub-url STUB [--secret S]   # an already running server

Reports p50/p95/p99 turn latency, throughput and errors (target 0), and two isolation checks:
every model prompt names one user only (no other user's unique token), and through the memory
API (token mode) each user's memories carry only their own token. With its own server, auth is
on (`MEMORY_AUTH_SECRET`): the scope comes from each user's bearer token, as in production.
Defaults: 50 users, 60 s. Prints JSON; `--json FILE` also writes it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
from langgraph_sdk import get_client

from agent.auth_tokens import mint_token
from bench._load_users import (
    TOKEN_RE,
    User,
    check_prompts,
    latency_summary,
    run_user,
    server_run_times,
)
from memory.types import Scope


@contextmanager
def own_server(secret: str, n_jobs: int, log_copy: Path | None) -> Iterator[tuple[str, Any, Path]]:
    """A throwaway Postgres, the in-process stub and `langgraph dev` on this repo's config."""
    from tests.support.langgraph_server import LangGraphServer
    from tests.support.postgres import start_postgres
    from tests.support.stub_llm import StubLLM

    with ExitStack() as stack:
        pg = start_postgres()
        stack.callback(pg.destroy)
        stub = stack.enter_context(StubLLM())
        data = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="lma-load-")))
        env = {"DATABASE_URL": pg.url, "MEMORY_DATA_DIR": str(data / "data"),
               "OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": "stub",
               "MEMORY_AGENT_MODEL": "openai:stub-model", "MEMORY_AUTH_SECRET": secret}  # fmt: skip
        server = LangGraphServer(env=env, workdir=data / "server", n_jobs=n_jobs)
        server.start()
        if log_copy is not None:  # registered first, so it runs after the server has stopped
            stack.callback(shutil.copyfile, server.log, log_copy)
        stack.callback(server.stop)
        print(f"langgraph dev up in {server.startup_s:.1f} s (log: {server.log})", flush=True)
        yield server.url, stub, server.log


def make_users(n: int, secret: str | None) -> list[User]:
    """Users with tokens (token mode) or with their scope in the context (open local mode)."""
    users = [User(i) for i in range(n)]
    for user in users:
        scope = Scope("load", f"user{user.index:03d}")
        if secret:
            user.headers = {"Authorization": f"Bearer {mint_token(scope, secret)}"}
        else:
            user.context = {"tenant_id": scope.tenant_id, "user_id": scope.user_id}
    return users


async def check_memory_api(url: str, users: list[User]) -> dict[str, Any]:
    """Each user's memories, read through `GET /memory/memories`, name only that user."""
    leaks = checked = memories = 0
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        for user in users:
            resp = await http.get("/memory/memories", headers=user.headers)
            resp.raise_for_status()
            contents = [m["content"] for m in resp.json()["memories"]]
            memories += len(contents)
            checked += 1
            leaks += sum(1 for c in contents if set(TOKEN_RE.findall(c)) - {user.token})
    return {"users_checked": checked, "memories_seen": memories, "foreign_memories": leaks}


async def drive(url: str, users: list[User], seconds: float) -> float:
    """Run every user concurrently for `seconds`; returns the measured wall time."""
    clients = [get_client(url=url, headers=u.headers, timeout=300) for u in users]
    started = time.monotonic()
    deadline = started + seconds
    await asyncio.gather(*(run_user(c, u, deadline) for c, u in zip(clients, users, strict=True)))
    return time.monotonic() - started


async def run(
    args: argparse.Namespace, url: str, stub: Any, secret: str | None, log: Path | None = None
) -> dict[str, Any]:
    """Warm up, drive the load, then run the isolation checks."""
    users = make_users(args.users, secret)
    warm = make_users(1, secret)[0]  # first-request costs (model load, pools) stay out of figures
    await drive(url, [warm], 0.001)
    stub.reset()
    offset = log.stat().st_size if log else 0
    seconds = await drive(url, users, args.seconds)
    report: dict[str, Any] = {"load": latency_summary(users, seconds)}
    if log is not None:
        with log.open(errors="replace") as f:
            f.seek(offset)
            report["server"] = server_run_times(f.read())
    report["isolation_prompts"] = check_prompts(stub.requests(), users)
    if secret:
        report["isolation_memory_api"] = await check_memory_api(url, users)
    return report


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the load test, print the report."""
    parser = argparse.ArgumentParser(prog="python -m bench.load", description=__doc__)
    parser.add_argument("--url", help="a running server (default: start one)")
    parser.add_argument("--stub-url", help="the running server's stub LLM (for the checks)")
    parser.add_argument("--secret", help="MEMORY_AUTH_SECRET of the running server")
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--n-jobs", type=int, default=50, help="runs per worker (own server)")
    parser.add_argument("--json", type=Path, help="also write the report here")
    parser.add_argument("--log", type=Path, help="keep a copy of the own server's log here")
    args = parser.parse_args(argv)
    if args.url:
        from tests.support.stub_llm import StubClient

        if not args.stub_url:
            parser.error("--url needs --stub-url (the isolation checks read the stub's prompts)")
        report = asyncio.run(run(args, args.url, StubClient(args.stub_url), args.secret))
    else:
        secret = "load-" + uuid.uuid4().hex
        with own_server(secret, args.n_jobs, args.log) as (url, stub, log):
            report = asyncio.run(run(args, url, stub, secret, log))
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    api = report.get("isolation_memory_api", {}).get("foreign_memories", 0)
    failed = (
        report["load"]["errors"]
        or api
        or report["isolation_prompts"]["prompts_with_another_users_token"]
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
