"""A new user's first run: a fresh clone, a fresh HOME, no `../shared`, no key, no model set.

The repository is cloned into an empty folder whose parents hold no `shared/`; HOME is empty,
so the embedding model is not in the user's cache and is downloaded once from a local HTTP
server (the download source is a setting; here it serves an archive built from the local model
copy, as Chroma's host serves `onnx.tar.gz`). The README's first command runs as written (plus
a free port and --no-browser); `uv` installs the locked environment from its existing cache with
UV_OFFLINE=1, since this machine has no internet. A turn then completes in the zero-key
memory-only mode through the real server and `langgraph_sdk`; Ctrl-C (SIGINT to the process
group, as a terminal sends it) stops everything cleanly, the embedded PostgreSQL included.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph_sdk import get_client

from prompts.agent import MEMORY_ONLY_LABEL
from tests.support.model_server import ModelServer, build_model_archive, serve_model_archive
from tests.support.ports import (
    REPO_ROOT,
    free_port,
    http_ok,
    log_tail,
    shared_tmpdir,
    stop_with,
    wait_until,
)

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1200)]


def readme_first_command() -> str:
    """The first command of the README's quick start, without its comment."""
    text = (REPO_ROOT / "README.md").read_text()
    section = text.split("## Quick start", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block, "the quick start has no bash block"
    lines = [line.split("#", 1)[0].strip() for line in block.group(1).splitlines()]
    commands = [line for line in lines if line]
    assert len(commands) == 2, f"the quick start should be two commands: {commands}"
    return commands[0]


def _oldest_python() -> str | None:
    """The distribution's Python when it is an older patch release than this one (3.11.2 on
    Debian 12): the quick start must work on the oldest interpreter `requires-python` allows."""
    for candidate in ("/usr/bin/python3.11", "/usr/bin/python3"):
        if not os.path.exists(candidate):
            continue
        probe = [candidate, "-c", "import sys; print(*sys.version_info[:3])"]
        found = subprocess.run(probe, capture_output=True, text=True, check=False)
        version = tuple(int(v) for v in found.stdout.split()) if found.returncode == 0 else ()
        if (3, 11) <= version < sys.version_info[:3]:
            return os.path.realpath(candidate)
    return None


_PYTHONS = [
    pytest.param(os.path.realpath(sys.executable), id="this-python"),
    pytest.param(_oldest_python(), id="distribution-python"),
]


def _uv_env(home: Path, python: str) -> dict[str, str]:
    cache = subprocess.run(["uv", "cache", "dir"], capture_output=True, text=True, check=True)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
        # Offline: packages come from the machine's uv cache, the interpreter from this one.
        "UV_CACHE_DIR": cache.stdout.strip(),
        "UV_OFFLINE": "1",
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_PYTHON": python,
        "LOG_COLOR": "false",
    }
    if "PYENV_ROOT" in os.environ:  # `uv` may be a pyenv shim
        env["PYENV_ROOT"] = os.environ["PYENV_ROOT"]
    return env


@pytest.fixture(scope="module")
def model_host(
    tmp_path_factory: pytest.TempPathFactory, embedding_model_dir: Path
) -> Iterator[ModelServer]:
    archive = tmp_path_factory.mktemp("model-host") / "onnx.tar.gz"
    sha = build_model_archive(embedding_model_dir, archive)
    with serve_model_archive(archive, sha) as server:
        yield server


def test_readme_quick_start_is_two_commands_and_the_first_is_the_dev_server() -> None:
    assert readme_first_command() == "cp .env.example .env && uv run memory-agent dev"


@pytest.fixture
def fresh_dir() -> Iterator[Path]:
    with shared_tmpdir("lma-fresh-") as path:
        yield path


@pytest.mark.parametrize("python", _PYTHONS)
async def test_fresh_clone_runs_the_first_command_and_answers_without_a_key(
    fresh_dir: Path, model_host: ModelServer, python: str | None
) -> None:
    if python is None:
        pytest.skip("no older Python 3.11 patch release on this machine")
    tmp_path = fresh_dir
    home, parent = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    parent.mkdir()
    assert not any((p / "shared").exists() for p in (parent, *parent.parents)), "shared/ visible"
    clone = parent / "layered-memory-agent"
    subprocess.run(["git", "clone", "--quiet", str(REPO_ROOT), str(clone)], check=True)
    assert "../shared" not in (clone / ".env.example").read_text()

    port = free_port()
    env = _uv_env(home, python)
    downloads_before = model_host.requests.count("/onnx.tar.gz")  # the server serves each case
    env["MEMORY_EMBEDDING_MODEL_URL"] = f"{model_host.url}/onnx.tar.gz"
    env["MEMORY_EMBEDDING_MODEL_SHA256"] = model_host.sha256
    command = f"{readme_first_command()} --port {port} --no-browser"
    log = tmp_path / "first-run.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            ["bash", "-c", command], cwd=clone, env=env, stdin=subprocess.DEVNULL,
            stdout=sink, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until(lambda: http_ok(f"{url}/ok"), timeout=900, what="the first command", log=log,
                   proc=proc)  # fmt: skip
        client = get_client(url=url)
        user = {"tenant_id": "default", "user_id": "newcomer"}
        t1 = (await client.threads.create())["thread_id"]
        said = {"messages": [{"role": "user", "content": "I prefer green tea over coffee."}]}
        out = await client.runs.wait(t1, "agent", input=said, context=user)
        assert isinstance(out, dict), out
        assert str(out["messages"][-1]["content"]).startswith(MEMORY_ONLY_LABEL), out["messages"]
        assert any(g["action"] == "stored" for g in out["gate"]), out["gate"]
        t2 = (await client.threads.create())["thread_id"]
        asked = {"messages": [{"role": "user", "content": "What do I like to drink?"}]}
        out = await client.runs.wait(t2, "agent", input=asked, context=user)
        reply = str(out["messages"][-1]["content"])
        assert reply.startswith(MEMORY_ONLY_LABEL) and "green tea" in reply, reply

        cached = home / ".cache" / "chroma" / "onnx_models" / "all-MiniLM-L6-v2" / "onnx"
        assert (cached / "model.onnx").is_file(), "the model was not downloaded into HOME's cache"
        downloads = model_host.requests.count("/onnx.tar.gz") - downloads_before
        assert downloads == 1, model_host.requests
    finally:
        rc = stop_with(proc, signal.SIGINT)  # Ctrl-C in a terminal
    output = log.read_text(errors="replace")
    assert rc in (0, 130, -signal.SIGINT), f"exit {rc}; log:\n{log_tail(log)}"
    assert "Traceback" not in output, log_tail(log, 120)
    assert not (clone / ".data" / "pg" / "postmaster.pid").exists(), "embedded Postgres still runs"
    wanted = subprocess.run([python, "-c", "import platform; print(platform.python_version())"],
                            capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    venv = (clone / ".venv" / "pyvenv.cfg").read_text()
    assert f"version_info = {wanted}" in venv or f"version = {wanted}" in venv, venv
