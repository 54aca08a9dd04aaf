"""The simulated users of `bench.load`: each holds a unique token, talks in turns, is timed.

A user's first turn states a preference that names their token (`<token>kit`); every later turn
carries `[<token>]` in the message. Each prompt the model receives therefore names exactly one
user, and any other user's token in it is a leak. The preference showing up again in later
prompts (recalled from long-term memory) is the positive control: memory is really in the loop.
"""

from __future__ import annotations

import asyncio
import re
import statistics
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

TOKEN_RE = re.compile(r"\bu\d{3}x[0-9a-f]{6}")
TURNS_PER_THREAD = 5  # a new thread every 5 turns, so recall must cross threads


@dataclass
class User:
    """One simulated user and what happened to them."""

    index: int
    token: str = field(init=False)
    headers: dict[str, str] = field(default_factory=dict)
    context: dict[str, Any] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.token = f"u{self.index:03d}x{uuid.uuid4().hex[:6]}"

    def message(self, turn: int) -> str:
        """The text of this user's `turn`-th message."""
        if turn == 0:
            return f"I prefer the {self.token}kit toolkit for every project I work on."
        return f"[{self.token}] Which toolkit should I use for step {turn} of my project?"


async def run_user(client: Any, user: User, deadline: float) -> None:
    """Send turns until `deadline` (monotonic seconds), timing each and counting failures."""
    turn, thread = 0, None
    while time.monotonic() < deadline:
        try:
            if turn % TURNS_PER_THREAD == 0:
                thread = (await client.threads.create())["thread_id"]
            started = time.monotonic()
            out = await client.runs.wait(
                thread,
                "agent",
                input={"messages": [{"role": "user", "content": user.message(turn)}]},
                context=user.context,
            )
            elapsed = time.monotonic() - started
            if isinstance(out, dict) and out.get("__error__"):
                user.errors.append(f"run error: {str(out['__error__'])[:200]}")
            else:
                user.latencies.append(elapsed)
        except Exception as exc:  # a failed turn is a data point, not the end of the run
            user.errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
            await asyncio.sleep(0.5)
        turn += 1


def prompt_text(request: dict[str, Any]) -> str:
    """Every message content of a recorded model request, joined."""
    parts = []
    for message in request.get("messages") or []:
        content = message.get("content")
        parts.append(content if isinstance(content, str) else repr(content))
    return "\n".join(parts)


def check_prompts(requests: list[dict[str, Any]], users: list[User]) -> dict[str, Any]:
    """Leaks (a prompt naming two users) and recall hits (the preference came back)."""
    known = {u.token for u in users}
    leaks: list[str] = []
    answer_prompts = recalled = 0
    for request in requests:
        text = prompt_text(request)
        tokens = set(TOKEN_RE.findall(text)) & known
        if len(tokens) > 1:
            leaks.append(", ".join(sorted(tokens)))
        if "tools" in request and len(tokens) == 1:
            answer_prompts += 1
            token = next(iter(tokens))
            # Later turns carry "[token]"; the preference text "<token>kit" came from memory.
            recalled += f"[{token}]" in text and f"{token}kit" in text
    return {
        "model_requests_checked": len(requests),
        "prompts_with_another_users_token": len(leaks),
        "leak_examples": leaks[:5],
        "answer_prompts": answer_prompts,
        "answer_prompts_with_recalled_preference": recalled,
    }


_RUN_DONE = re.compile(r"Background run succeeded.*?run_exec_ms=(\d+).*?run_wait_time_ms=(\d+)")


def _pct(values: list[float], p: float) -> float | None:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))], 3) if ordered else None


def server_run_times(log_text: str) -> dict[str, Any]:
    """Split turn latency as the server logged it: graph execution vs. waiting in its queue."""
    pairs = [(int(a) / 1000, int(b) / 1000) for a, b in _RUN_DONE.findall(log_text)]
    execs, waits = [p[0] for p in pairs], [p[1] for p in pairs]
    return {
        "runs": len(pairs),
        "graph_exec_s": {"p50": _pct(execs, 0.5), "p95": _pct(execs, 0.95)},
        "queue_wait_s": {"p50": _pct(waits, 0.5), "p95": _pct(waits, 0.95)},
    }


def latency_summary(users: list[User], seconds: float) -> dict[str, Any]:
    """p50/p95/p99/max turn latency, throughput and errors over all users."""
    lat = sorted(x for u in users for x in u.latencies)
    errors = [e for u in users for e in u.errors]
    return {
        "users": len(users),
        "seconds": round(seconds, 1),
        "turns_ok": len(lat),
        "turns_per_second": round(len(lat) / seconds, 2) if seconds else None,
        "latency_s": {
            "p50": _pct(lat, 0.50),
            "p95": _pct(lat, 0.95),
            "p99": _pct(lat, 0.99),
            "max": round(lat[-1], 3) if lat else None,
            "mean": round(statistics.fmean(lat), 3) if lat else None,
        },
        "errors": len(errors),
        "error_examples": sorted(set(errors))[:5],
    }
