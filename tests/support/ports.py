"""Shared plumbing for the test servers: free ports, readiness polling, child env, paths."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

# Every test process and child server runs with telemetry off (nothing phones home);
# HF_HUB_OFFLINE stops any library from trying to download a model (there is no internet here).
PRIVACY_ENV: dict[str, str] = {
    "ANONYMIZED_TELEMETRY": "False",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "ORT_DISABLE_TELEMETRY": "1",
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "HF_HUB_OFFLINE": "1",
    # Tests never download: a test of the download path points this at a local server.
    "MEMORY_EMBEDDING_MODEL_URL": "off",
}


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def model_dir() -> Path:
    """The local embedding model: `$MEMORY_EMBEDDING_MODEL_DIR`, else `<repo>/../shared/...`."""
    override = os.environ.get("MEMORY_EMBEDDING_MODEL_DIR", "").strip()
    if override:
        return Path(override)
    return REPO_ROOT.parent / "shared" / "models" / "all-MiniLM-L6-v2"


def venv_bin(name: str) -> str:
    """Path of a console script installed beside the running interpreter (works under uv run)."""
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.exists() else name


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now (2024 is taken on these hosts)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment plus the privacy settings plus `extra` (which wins)."""
    env = dict(os.environ)
    env.update(PRIVACY_ENV)
    env.setdefault("MEMORY_EMBEDDING_MODEL_DIR", str(model_dir()))
    env.update(extra or {})
    return env


def http_ok(url: str, timeout: float = 1.0) -> bool:
    """True when GET `url` answers 2xx."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return 200 <= int(resp.status) < 300
    except (urllib.error.URLError, OSError, ValueError):
        return False


def log_tail(path: Path | None, lines: int = 60) -> str:
    """The last `lines` lines of a log file, or a note when there is none."""
    if path is None or not path.exists():
        return "(no log)"
    text = _ANSI.sub("", path.read_text(errors="replace")).splitlines()
    return "\n".join(text[-lines:])


def wait_until(
    check: Callable[[], bool],
    *,
    timeout: float,
    what: str,
    log: Path | None = None,
    proc: subprocess.Popen[bytes] | None = None,
) -> float:
    """Poll `check` every 0.1 s; return the seconds it took, or raise with the log tail."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if check():
            return time.monotonic() - start
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}; log:\n{log_tail(log)}")
        time.sleep(0.1)
    raise TimeoutError(f"{what} not ready after {timeout:.0f} s; log:\n{log_tail(log)}")


def terminate(proc: subprocess.Popen[bytes] | None, timeout: float = 15.0) -> None:
    """Stop a child started with `start_new_session=True`: SIGTERM its group, then SIGKILL."""
    if proc is None or proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=timeout)


def spawn(
    cmd: list[str], *, env: Mapping[str, str], cwd: Path, log: Path
) -> subprocess.Popen[bytes]:
    """Start `cmd` in its own process group, stdout+stderr appended to `log`, no stdin."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as sink:
        return subprocess.Popen(
            cmd,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


@contextlib.contextmanager
def shared_tmpdir(prefix: str) -> Iterator[Path]:
    """A temp dir other users can enter (removed afterwards).

    Not pytest's tmp_path: its 0700 parents keep out the unprivileged user the embedded
    PostgreSQL (pgserver) runs as when the tests run as root.
    """
    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def stop_with(
    proc: subprocess.Popen[bytes], sig: int, *, group: bool = True, timeout: float = 90.0
) -> int:
    """Send `sig` (to the process group, as a terminal's Ctrl-C does, or to `proc` alone) and
    wait for the exit code; SIGKILL the group and raise if it does not exit in `timeout`."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            if group:
                os.killpg(proc.pid, sig)
            else:
                proc.send_signal(sig)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise


async def eventually(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    """Poll `condition` every 10 ms on the running loop; fail the test after `timeout` s."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)
