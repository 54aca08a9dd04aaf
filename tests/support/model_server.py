"""A local HTTP server that serves the embedding model archive, as Chroma's download host does.

The archive is built from the local model folder in the layout Chroma's `onnx.tar.gz` has
(`onnx/model.onnx`, `onnx/tokenizer.json`, ...). Paths choose the behaviour: `/onnx.tar.gz`
serves it whole, `/corrupt.tar.gz` serves it with bytes changed, `/truncated.tar.gz` announces
the full length and hangs up halfway, `/missing.tar.gz` answers 404.
"""

from __future__ import annotations

import hashlib
import tarfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def build_model_archive(model_dir: Path, out: Path) -> str:
    """Write `out` (tar.gz with `onnx/...`) from `model_dir`; return its SHA-256."""
    source = model_dir / "onnx" if (model_dir / "onnx").is_dir() else model_dir
    with tarfile.open(out, "w:gz", compresslevel=1) as tar:
        for path in sorted(source.iterdir()):
            if path.is_file():
                tar.add(path, arcname=f"onnx/{path.name}")
    return hashlib.sha256(out.read_bytes()).hexdigest()


@dataclass
class ModelServer:
    """The running server: its base URL, the archive's checksum and the paths requested."""

    url: str
    sha256: str
    requests: list[str] = field(default_factory=list)


@contextmanager
def serve_model_archive(archive: Path, sha256: str) -> Iterator[ModelServer]:
    """Serve `archive` on a free port of 127.0.0.1 until the block ends."""
    payload = archive.read_bytes()
    corrupt = bytearray(payload)
    for i in range(len(corrupt) // 2, min(len(corrupt), len(corrupt) // 2 + 64)):
        corrupt[i] ^= 0xFF
    state = ModelServer(url="", sha256=sha256)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # quiet test output
            return

        def do_GET(self) -> None:
            state.requests.append(self.path)
            body = {"/onnx.tar.gz": payload, "/corrupt.tar.gz": bytes(corrupt)}.get(self.path)
            if self.path == "/truncated.tar.gz":
                self.send_response(200)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload[: len(payload) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
