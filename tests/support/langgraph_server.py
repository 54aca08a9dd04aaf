"""Run `langgraph dev` in a subprocess for end-to-end tests, on a free port, logging to a file."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from subprocess import Popen
from typing import Any

from tests.support.ports import (
    REPO_ROOT,
    child_env,
    free_port,
    http_ok,
    spawn,
    terminate,
    venv_bin,
    wait_until,
)


def agent_env(
    database_url: str, data_dir: Path, model_base_url: str, **extra: str
) -> dict[str, str]:
    """The env of a `langgraph dev` serving the agent on `database_url` with the stub model."""
    return {
        "DATABASE_URL": database_url,
        "MEMORY_DATA_DIR": str(data_dir),
        "OPENAI_BASE_URL": model_base_url,
        "OPENAI_API_KEY": "stub",
        "MEMORY_AGENT_MODEL": "openai:stub-model",
        **extra,
    }


def _absolute(value: Any, base: Path) -> Any:
    """Make every "./x" or "../x" string in a langgraph.json absolute against `base`."""
    if isinstance(value, dict):
        return {k: _absolute(v, base) for k, v in value.items()}
    if isinstance(value, list):
        return [_absolute(v, base) for v in value]
    if isinstance(value, str) and (value == "." or value.startswith(("./", "../"))):
        path, sep, attr = value.partition(":")
        return f"{(base / path).resolve()}{sep}{attr}"
    return value


def isolated_config(config: Path, workdir: Path) -> Path:
    """Copy `config` into `workdir` with absolute paths.

    `langgraph dev` resolves graph paths against its cwd and keeps its in-memory runtime state
    in `<cwd>/.langgraph_api`; running each test server in its own workdir keeps that state out
    of the repo and away from other servers.
    """
    data = json.loads(config.read_text())
    target = workdir / "langgraph.json"
    target.write_text(json.dumps(_absolute(data, config.resolve().parent), indent=2))
    return target


class LangGraphServer:
    """`langgraph dev --no-browser --no-reload` serving `config`; `url` is for `get_client`.

    `env` is added on top of this process's environment and the privacy settings, e.g.
    `{"DATABASE_URL": ..., "OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": "stub"}`.
    The server runs in `workdir` (a new temp dir by default) on a copy of `config` with absolute
    paths; `restart()` keeps the workdir, so the server's thread registry survives it.
    """

    def __init__(
        self,
        config: Path = REPO_ROOT / "langgraph.json",
        env: Mapping[str, str] | None = None,
        *,
        workdir: Path | None = None,
        port: int | None = None,
        n_jobs: int | None = None,
    ) -> None:
        self.n_jobs = n_jobs  # None: the CLI default, which is ONE run at a time (0.4.x)
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix="lma-langgraph-"))
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.config = isolated_config(config, self.workdir)
        # Plain log lines: the file is read by people and by the failure message.
        self.env = {"LOG_COLOR": "false", **(env or {})}
        self.port = port or free_port()
        self.log = self.workdir / "langgraph-dev.log"
        self.proc: Popen[bytes] | None = None
        self.startup_s = 0.0

    @property
    def url(self) -> str:
        """Base URL of the API server."""
        return f"http://127.0.0.1:{self.port}"

    def ready(self) -> bool:
        """True when `GET /ok` answers 2xx."""
        return http_ok(f"{self.url}/ok")

    def start(self, timeout: float = 180.0) -> None:
        """Start and wait for `/ok`; on failure the error carries the log tail."""
        if self.proc is not None and self.proc.poll() is None:
            return
        cmd = [venv_bin("langgraph"), "dev", "--port", str(self.port), "--host", "127.0.0.1",
               "--no-browser", "--no-reload", "--config", str(self.config)]  # fmt: skip
        if self.n_jobs is not None:
            cmd += ["--n-jobs-per-worker", str(self.n_jobs)]
        with self.log.open("a") as log:  # appended: a restart keeps the earlier run's lines
            log.write(f"$ {' '.join(cmd)}\n")
        self.proc = spawn(cmd, env=child_env(self.env), cwd=self.workdir, log=self.log)
        atexit.register(terminate, self.proc)  # no orphan server if the caller crashes
        try:
            self.startup_s = wait_until(
                self.ready, timeout=timeout, what="langgraph dev", log=self.log, proc=self.proc
            )
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop the server (SIGTERM to its process group, SIGKILL after 15 s)."""
        terminate(self.proc)
        self.proc = None
        # The port lingers for a moment after exit; wait so a restart can bind it again.
        deadline = time.monotonic() + 5.0
        while http_ok(f"{self.url}/ok", timeout=0.2) and time.monotonic() < deadline:
            time.sleep(0.1)

    def kill(self) -> None:
        """`kill -9` the server's whole process group: no shutdown, nothing flushed."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=15)
        self.proc = None

    def restart(self, timeout: float = 180.0) -> None:
        """Stop and start on the same port with the same env."""
        self.stop()
        self.start(timeout)

    def __enter__(self) -> LangGraphServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
