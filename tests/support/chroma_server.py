"""A real Chroma server (`chroma run`) for integration tests, on a free loopback port."""

from __future__ import annotations

import atexit
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.support.ports import (
    child_env,
    free_port,
    http_ok,
    spawn,
    terminate,
    venv_bin,
    wait_until,
)


class ChromaServer:
    """`chroma run --path DIR` on 127.0.0.1; `stop()`/`start()` keep DIR, so data survives."""

    def __init__(self, path: Path | None = None, port: int | None = None) -> None:
        self._own_path = path is None
        self.path = path or Path(tempfile.mkdtemp(prefix="lma-chroma-"))
        self.port = port or free_port()
        self.log = self.path.parent / f"{self.path.name}.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.startup_s = 0.0

    @property
    def url(self) -> str:
        """Base URL, the value for `CHROMA_URL`."""
        return f"http://127.0.0.1:{self.port}"

    def heartbeat_ok(self) -> bool:
        """True when `GET /api/v2/heartbeat` answers."""
        return http_ok(f"{self.url}/api/v2/heartbeat")

    def start(self, timeout: float = 60.0) -> None:
        """Start the server (same path and port as before) and wait for its heartbeat."""
        if self.proc is not None and self.proc.poll() is None:
            return
        cmd = [venv_bin("chroma"), "run", "--path", str(self.path), "--host", "127.0.0.1",
               "--port", str(self.port)]  # fmt: skip
        self.proc = spawn(cmd, env=child_env(), cwd=self.path, log=self.log)
        atexit.register(terminate, self.proc)  # no orphan server if the caller crashes
        self.startup_s = wait_until(
            self.heartbeat_ok, timeout=timeout, what="chroma run", log=self.log, proc=self.proc
        )

    def stop(self) -> None:
        """Stop the server ("Chroma down"); its files stay for the next `start()`."""
        terminate(self.proc)
        self.proc = None

    def destroy(self) -> None:
        """Stop and delete the data (only when this object made the temp dir)."""
        self.stop()
        if self._own_path:
            shutil.rmtree(self.path, ignore_errors=True)
            self.log.unlink(missing_ok=True)
