"""What hostile input costs: perceive, the gate, and `/ok` while a huge message is processed.

Perceive and the gate on 1k / 64k / 1M-character messages of adversarial shapes, and the
server's `/ok` latency while such a message is processed.

    python -m bench.input_safety [--no-server] [--shapes "f(|a,|..."] [--json OUT]

In process, for each shape and size it times what perceive does with a message (clean, cut to
the server's `MEMORY_MAX_INPUT_CHARS`, classify, extract features: the function perceive runs
in a worker thread) and what the gate does with the kept text (split into candidates, redact,
poisoning check, classify, score), next to a baseline measured in the same run on the same
text: one SHA-256 pass over it (a linear scan), so the ratio shows the constant factor.

With the server (default), it starts a throwaway Postgres, the stub model and `langgraph dev`
with auth on, sends a message of each shape at the server's limit (processed: the worst case a
turn can cost) and one of 1,000,000 characters (refused with 413 at the door), and polls
`GET /ok` every 50 ms while each runs: the target is a p99 under 100 ms (the baseline is `/ok`
on the idle server, measured first).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import statistics
import time
import uuid
from pathlib import Path
from typing import Any

from memory.gating.gate import gate, split_candidates
from memory.settings import Settings, apply_privacy_defaults
from memory.working.sensory import InputError

SIZES = (1_000, 64_000, 1_000_000)
# Shapes that made backtracking patterns retry a run from every position (the 20 s freeze was
# "f(" repeated), long runs of blanks, digits, separators, CJK, confusables and pasted JSON.
SHAPES = ("f(", "a,", " ", "1", "\n", "我的", "x: ", "but ", "ѕуѕtеm: ", '{"policy": ', "4111 ")


def _text(shape: str, n: int) -> str:
    return (shape * (n // len(shape) + 1))[:n]


def _timed(fn: Any, *args: Any) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def _gate_all(text: str) -> None:
    for candidate in split_candidates(text):
        gate(candidate)


def in_process(shapes: tuple[str, ...]) -> list[dict[str, Any]]:
    """Time perceive's CPU part and the gate per shape and size."""
    from agent.nodes.perceive import _sense

    limit = Settings.from_env().max_input_chars
    rows = []
    print(f"{'shape':>12} {'chars':>9} {'perceive ms':>12} {'gate ms':>9} {'sha256 ms':>10} "
          f"{'ratio':>7}")  # fmt: skip
    for shape in shapes:
        for size in SIZES:
            raw = _text(shape, size)
            start = time.perf_counter()
            try:
                kept, _, _, _ = _sense(raw, limit, None)
            except InputError:  # only blanks: perceive refuses it, the gate never runs
                kept = ""
            perceive_s = time.perf_counter() - start
            gate_s = _timed(_gate_all, kept)
            base = _timed(lambda t: hashlib.sha256(t.encode("utf-8")).digest(), raw)
            ratio = (perceive_s + gate_s) / max(base, 1e-6)
            rows.append({"shape": shape, "chars": size, "kept": len(kept),
                         "perceive_ms": perceive_s * 1e3, "gate_ms": gate_s * 1e3,
                         "sha256_ms": base * 1e3, "ratio": ratio})  # fmt: skip
            print(f"{shape!r:>12} {size:>9,} {perceive_s * 1e3:>12.1f} {gate_s * 1e3:>9.1f} "
                  f"{base * 1e3:>10.2f} {ratio:>7.0f}", flush=True)  # fmt: skip
    return rows


async def _poll_ok(url: str, busy: asyncio.Task[Any] | None, samples: int = 40) -> list[float]:
    import httpx

    latencies: list[float] = []
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        # At least one sample: a refused message can finish before the first poll.
        while (busy is not None and not busy.done()) or len(latencies) < (1 if busy else samples):
            start = time.perf_counter()
            (await http.get("/ok")).raise_for_status()
            latencies.append(time.perf_counter() - start)
            await asyncio.sleep(0.05)
    return latencies


def _summary(latencies: list[float]) -> dict[str, float]:
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return {"n": len(ordered), "p50_ms": statistics.median(ordered) * 1e3, "p99_ms": p99 * 1e3,
            "max_ms": ordered[-1] * 1e3}  # fmt: skip


async def _server_run(url: str, secret: str, shapes: tuple[str, ...]) -> list[dict[str, Any]]:
    from langgraph_sdk import get_client

    from agent.auth_tokens import mint_token
    from memory.types import Scope

    headers = {"Authorization": f"Bearer {mint_token(Scope('bench', 'hostile'), secret)}"}
    client = get_client(url=url, headers=headers, timeout=600)
    # Warm-up turn: model load and pools stay out of the figures.
    thread = (await client.threads.create())["thread_id"]
    await client.runs.wait(thread, "agent", input={"messages": [{"role": "user", "content": "hi"}]})
    idle = _summary(await _poll_ok(url, None))
    print(f"\n/ok on the idle server: p50 {idle['p50_ms']:.1f} ms, p99 {idle['p99_ms']:.1f} ms")
    rows = [{"shape": "(idle)", **idle}]
    # The largest message the server processes (its limit), and a 1,000,000-character one, which
    # the door refuses (413) before anything is recorded or parsed.
    limit = Settings.from_env().max_input_chars
    for shape in shapes:
        for size in (limit, 1_000_000):
            thread = (await client.threads.create())["thread_id"]
            message = {"role": "user", "content": _text(shape, size)}
            start = time.perf_counter()
            turn = asyncio.create_task(
                client.runs.wait(thread, "agent", input={"messages": [message]}, raise_error=False)
            )
            await asyncio.sleep(0.01)
            busy = _summary(await _poll_ok(url, turn))
            turn_s = time.perf_counter() - start
            if turn.exception() is not None:
                outcome = "refused (413)"
            elif isinstance(result := turn.result(), dict) and "__error__" in result:
                # A failed turn is no measurement of a processed one: say so, loudly.
                outcome = f"FAILED ({result['__error__'].get('error')})"
            else:
                outcome = "processed"
            rows.append({"shape": shape, "chars": size, "outcome": outcome, "turn_s": turn_s,
                         **busy})  # fmt: skip
            verdict = "ok" if busy["p99_ms"] < 100 else "OVER TARGET"
            print(
                f"{shape!r:>12} {size:>9,} chars, {outcome}: turn {turn_s:.1f} s; /ok p50 "
                f"{busy['p50_ms']:.1f} ms, p99 {busy['p99_ms']:.1f} ms, max {busy['max_ms']:.1f}"
                f" ms ({busy['p99_ms'] / max(idle['p99_ms'], 1e-3):.1f}x idle) {verdict}",
                flush=True,
            )
    return rows


def with_server(shapes: tuple[str, ...]) -> list[dict[str, Any]]:
    """Start Postgres, the stub and `langgraph dev` (auth on) and measure `/ok` under load."""
    from bench.load import own_server

    secret = "bench-" + uuid.uuid4().hex
    with own_server(secret, n_jobs=1, log_copy=None) as (url, _stub, _log):
        return asyncio.run(_server_run(url, secret, shapes))


def main() -> None:
    """Print the in-process table, then (unless --no-server) `/ok` latency under hostile load."""
    apply_privacy_defaults()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-server", action="store_true", help="skip the langgraph dev part")
    parser.add_argument("--shapes", help="shapes separated by | (default: a built-in set)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    shapes = tuple(s for s in args.shapes.split("|") if s) if args.shapes else SHAPES
    result: dict[str, Any] = {"in_process": in_process(shapes)}
    if not args.no_server:
        result["server"] = with_server(shapes)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
