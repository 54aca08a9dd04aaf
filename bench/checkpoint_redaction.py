"""What redacting (and encrypting) checkpoints costs per write, against the plain serializer.

A thread's `messages` channel is re-serialised whole at every step, so the redacting serializer
runs the privacy filter over the whole history each time; its cache of recently seen strings
makes a step pay only for the new text. Prints the time of one `dumps_typed` of a state of N
messages (realistic sentences, 1 in 10 carrying a secret) for: the plain serializer (baseline),
redacting with a cold cache (first write of that history), redacting with a warm cache (every
later step), redacting + AES-GCM encryption, and the next turn: the history as the next turn
loads it from the checkpoint (redacted: a message that carried a secret now holds a
placeholder) with one new exchange, saved by the same process. The last is what a thread pays
per save from its second turn on; it is only cheap if the redacted form of an old message is
known to be clean too.

    uv run python -m bench.checkpoint_redaction
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from agent.checkpointer import RedactingSerializer, checkpoint_serializer

_WORDS = (
    "the deploy window moved to thursday and I prefer short answers with code in "
    "typescript please remember my sister lives in lisbon we chose postgres"
).split()
_SECRETS = ("my card is 4111 1111 1111 1111", "password: hunter2hunter2",
            "key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD")  # fmt: skip


def _state(n: int, rng: random.Random) -> dict[str, Any]:
    messages: list[Any] = []
    for i in range(n):
        text = " ".join(rng.choice(_WORDS) for _ in range(80))
        if i % 10 == 3:
            text += " " + rng.choice(_SECRETS)
        cls = HumanMessage if i % 2 == 0 else AIMessage
        messages.append(cls(text, id=f"m{i}"))
    return {"messages": messages}


def _time(fn: Callable[[], object], repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs) * 1000


def _next_turn(serde: RedactingSerializer, state: dict[str, Any], rng: random.Random) -> float:
    """Save `state`, load it back, add one exchange and time the save of that (ms, median)."""
    runs = []
    for turn in range(5):
        loaded = serde.loads_typed(serde.dumps_typed(state))
        new = _state(2, rng)["messages"]
        for i, message in enumerate(new):
            message.id = f"next{turn}-{i}"
        loaded["messages"] = [*loaded["messages"], *new]
        start = time.perf_counter()
        serde.dumps_typed(loaded)
        runs.append(time.perf_counter() - start)
    return statistics.median(runs) * 1000


def main() -> None:
    """Print ms per write for each serializer and state size, and ratios to the baseline."""
    rng = random.Random(7)
    key = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
    print(f"{'messages':>8} {'plain ms':>9} {'cold ms':>8} {'warm ms':>8} {'warm+aes':>9} "
          f"{'next turn':>9} {'cold/plain':>10} {'warm/plain':>10}")  # fmt: skip
    for n in (10, 50, 200):
        state = _state(n, rng)
        plain = JsonPlusSerializer()
        base = _time(lambda: plain.dumps_typed(state), 20)  # noqa: B023
        cold = statistics.median(
            _time(lambda: checkpoint_serializer(JsonPlusSerializer(), key="").dumps_typed(state), 1)  # noqa: B023
            for _ in range(5)
        )
        warm_serde: RedactingSerializer = checkpoint_serializer(JsonPlusSerializer(), key="")
        warm_serde.dumps_typed(state)
        warm = _time(lambda: warm_serde.dumps_typed(state), 20)  # noqa: B023
        sealed = checkpoint_serializer(JsonPlusSerializer(), key=key)
        sealed.dumps_typed(state)
        aes = _time(lambda: sealed.dumps_typed(state), 20)  # noqa: B023
        nxt = _next_turn(warm_serde, state, rng)
        print(f"{n:>8} {base:>9.2f} {cold:>8.2f} {warm:>8.2f} {aes:>9.2f} {nxt:>9.2f} "
              f"{cold / base:>10.1f} {warm / base:>10.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
