"""Schedule consolidation on LangGraph Platform: a cron that runs the `consolidate` graph.

    python -m agent.schedule --url https://my-deployment.langgraph.app [--schedule "0 3 * * *"]

does what the README shows:

    client.crons.create(assistant_id="consolidate", schedule="0 3 * * *",
                        input={"all": True, "batch_size": 50})

Schedules are in UTC. With `--replace` (the default) existing crons of the graph are deleted
first, so running the script twice does not consolidate twice a night. The API key, if the
deployment needs one, comes from LANGGRAPH_API_KEY / LANGSMITH_API_KEY (read by the SDK).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from langgraph_sdk import get_client

from agent.consolidate_graph import RECURSION_LIMIT, ConsolidateInput
from memory.settings import apply_privacy_defaults

ASSISTANT_ID = "consolidate"
DEFAULT_SCHEDULE = "0 3 * * *"  # 03:00 UTC every night


async def create_schedule(
    url: str,
    *,
    schedule: str = DEFAULT_SCHEDULE,
    graph_input: ConsolidateInput | None = None,
    replace: bool = True,
    token: str | None = None,
) -> dict[str, Any]:
    """Create the consolidation cron on the server at `url`; return the cron record.

    `token` is a `memory:admin` bearer token for a server with MEMORY_AUTH_SECRET set
    (`python -m agent.auth_tokens --user ops --permission memory:admin`): crons touch every
    user, so only admins may create them.
    """
    headers = {"Authorization": f"Bearer {token}"} if token else None
    client = get_client(url=url, headers=headers)
    payload: dict[str, Any] = dict(graph_input or {"all": True, "batch_size": 50})
    if replace:
        # Crons are searched by assistant UUID; the graph's assistants are found by graph id.
        for assistant in await client.assistants.search(graph_id=ASSISTANT_ID, limit=100):
            for old in await client.crons.search(assistant_id=assistant["assistant_id"]):
                await client.crons.delete(old["cron_id"])
    created = await client.crons.create(
        assistant_id=ASSISTANT_ID,
        schedule=schedule,
        input=payload,
        config={"recursion_limit": RECURSION_LIMIT},
        metadata={"created_by": "agent.schedule"},
    )
    return dict(created)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m agent.schedule",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--url", required=True, help="LangGraph server / deployment URL")
    parser.add_argument("--schedule", default=DEFAULT_SCHEDULE, help="cron expression (UTC)")
    parser.add_argument("--tenant", help="only this tenant's users (default: all tenants)")
    parser.add_argument("--batch-size", type=int, default=50, help="users per batch")
    parser.add_argument("--dry-run", action="store_true", help="scheduled runs change nothing")
    parser.add_argument("--keep", action="store_true", help="keep existing consolidation crons")
    parser.add_argument("--token", help="memory:admin bearer token (servers with auth on)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Create the cron and print it as JSON."""
    apply_privacy_defaults()
    args = _parser().parse_args(argv)
    graph_input: ConsolidateInput = {"all": True, "batch_size": args.batch_size}
    if args.tenant:
        graph_input["tenant_id"] = args.tenant
    if args.dry_run:
        graph_input["dry_run"] = True
    cron = asyncio.run(
        create_schedule(
            args.url,
            schedule=args.schedule,
            graph_input=graph_input,
            replace=not args.keep,
            token=args.token,
        )  # fmt: skip
    )
    print(json.dumps(cron, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
