"""Text work goes to a thread, or to a worker process when the text is large."""

from __future__ import annotations

import os

from memory.gating.gate import gate, split_candidates
from memory.offload import LARGE_TEXT_CHARS, run_cpu, shutdown


async def test_small_text_stays_in_process_large_text_goes_to_a_worker() -> None:
    try:
        assert await run_cpu(os.getpid, size=LARGE_TEXT_CHARS - 1) == os.getpid()
        worker = await run_cpu(os.getpid, size=LARGE_TEXT_CHARS)
        assert worker != os.getpid()
    finally:
        shutdown()


async def test_the_worker_decides_exactly_as_in_process() -> None:
    text = "I prefer tabs over spaces. My card is 4111 1111 1111 1111. " * 200
    try:
        candidates = await run_cpu(split_candidates, text, size=len(text))
        assert candidates == split_candidates(text)
        remote = await run_cpu(gate, candidates[0], size=len(text), context="Any news?")
        assert remote == gate(candidates[0], context="Any news?")
        assert "4111" not in remote.content
    finally:
        shutdown()
