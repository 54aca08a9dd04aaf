"""Plain `langgraph dev` as users run it: reads `.env`, and stops the embedded PostgreSQL it
started when it is stopped (Ctrl-C, or SIGTERM from a process manager)."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph_sdk import get_sync_client

from tests.support.langgraph_server import isolated_config
from tests.support.ports import (
    REPO_ROOT,
    child_env,
    free_port,
    http_ok,
    log_tail,
    shared_tmpdir,
    spawn,
    stop_with,
    venv_bin,
    wait_until,
)

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]


@pytest.fixture
def workdir() -> Iterator[Path]:
    with shared_tmpdir("lma-dev-") as path:
        yield path


def test_langgraph_json_reads_dotenv() -> None:
    assert json.loads((REPO_ROOT / "langgraph.json").read_text())["env"] == ".env"


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_plain_langgraph_dev_stops_its_embedded_postgres(workdir: Path, stop: int) -> None:
    config = isolated_config(REPO_ROOT / "langgraph.json", workdir)
    data = workdir / "data-from-dotenv"  # not the default `.data`: proves `.env` was read
    # The server reads MEMORY_DATA_DIR from .env in its working directory, as a user's would.
    (workdir / ".env").write_text(f"MEMORY_DATA_DIR={data}\n")
    unset = ("DATABASE_URL", "DATABASE_URI", "POSTGRES_URI", "MEMORY_DATA_DIR")
    env = {k: v for k, v in child_env({"LOG_COLOR": "false"}).items() if k not in unset}
    port = free_port()
    log = workdir / "dev.log"
    cmd = [venv_bin("langgraph"), "dev", "--port", str(port), "--host", "127.0.0.1",
           "--no-browser", "--no-reload", "--config", str(config)]  # fmt: skip
    proc = spawn(cmd, env=env, cwd=workdir, log=log)
    try:
        wait_until(lambda: http_ok(f"http://127.0.0.1:{port}/ok"), timeout=300,
                   what="langgraph dev", log=log, proc=proc)  # fmt: skip
        assert (data / "pg" / "postmaster.pid").exists(), "the embedded database did not start"
    finally:
        stop_with(proc, stop)
    assert not (data / "pg" / "postmaster.pid").exists(), log_tail(log)
    assert "Traceback" not in log.read_text(errors="replace"), log_tail(log, 120)


@pytest.mark.parametrize("to_group", [True, False], ids=["ctrl-c-to-group", "sigterm-to-cli"])
def test_memory_agent_dev_stops_cleanly(workdir: Path, to_group: bool) -> None:
    data = workdir / ".data"
    env = {k: v for k, v in child_env({"LOG_COLOR": "false", "MEMORY_DATA_DIR": str(data)}).items()
           if k not in ("DATABASE_URL", "DATABASE_URI", "POSTGRES_URI")}  # fmt: skip
    isolated_config(REPO_ROOT / "langgraph.json", workdir)  # the CLI runs in `workdir`
    port = free_port()
    log = workdir / "cli-dev.log"
    cmd = [venv_bin("memory-agent"), "dev", "--port", str(port), "--no-browser"]
    proc = spawn(cmd, env=env, cwd=workdir, log=log)
    try:
        wait_until(lambda: http_ok(f"http://127.0.0.1:{port}/ok"), timeout=300,
                   what="memory-agent dev", log=log, proc=proc)  # fmt: skip
        assert (data / "pg" / "postmaster.pid").exists()
        # A turn opens the memory store (a pool on the server's loop) that shutdown must close.
        client = get_sync_client(url=f"http://127.0.0.1:{port}")
        thread = client.threads.create()["thread_id"]
        said = {"messages": [{"role": "user", "content": "I prefer window seats."}]}
        out = client.runs.wait(thread, "agent", input=said, context={"user_id": "dev-user"})
        assert isinstance(out, dict) and out["messages"][-1]["type"] == "ai", out
    finally:
        # A terminal's Ctrl-C reaches the group; a process manager signals the CLI alone.
        rc = stop_with(proc, signal.SIGINT if to_group else signal.SIGTERM, group=to_group)
    assert rc == 0, log_tail(log)
    assert "Traceback" not in log.read_text(errors="replace"), log_tail(log, 120)
    assert not (data / "pg" / "postmaster.pid").exists(), log_tail(log)
    assert not http_ok(f"http://127.0.0.1:{port}/ok"), "the server outlived the CLI"


def test_memory_agent_dev_reloads_on_a_code_change(workdir: Path) -> None:
    data = workdir / ".data"
    env = {k: v for k, v in child_env({"LOG_COLOR": "false", "MEMORY_DATA_DIR": str(data)}).items()
           if k not in ("DATABASE_URL", "DATABASE_URI", "POSTGRES_URI")}  # fmt: skip
    isolated_config(REPO_ROOT / "langgraph.json", workdir)
    code = workdir / "my_tool.py"  # code of the project being developed, in the folder it runs in
    code.write_text("VALUE = 1\n")
    port = free_port()
    log = workdir / "cli-dev-reload.log"
    proc = spawn([venv_bin("memory-agent"), "dev", "--port", str(port), "--no-browser"],
                 env=env, cwd=workdir, log=log)  # fmt: skip
    try:
        wait_until(lambda: http_ok(f"http://127.0.0.1:{port}/ok"), timeout=300,
                   what="memory-agent dev", log=log, proc=proc)  # fmt: skip
        code.write_text("VALUE = 2\n")
        wait_until(lambda: "Reloading" in log.read_text(errors="replace"), timeout=60,
                   what="the reload", log=log, proc=proc)  # fmt: skip
        # The reloader keeps the socket open while it swaps workers, so /ok can be answered by
        # the old worker on its way down; only the new worker's startup line says it is in.
        wait_until(lambda: _started_after_reload(log), timeout=300,
                   what="the reloaded server", log=log, proc=proc)  # fmt: skip
        wait_until(lambda: http_ok(f"http://127.0.0.1:{port}/ok"), timeout=300,
                   what="the reloaded server", log=log, proc=proc)  # fmt: skip
        # The reloaded server opens the same embedded stores the first one had.
        client = get_sync_client(url=f"http://127.0.0.1:{port}")
        thread = client.threads.create()["thread_id"]
        said = {"messages": [{"role": "user", "content": "I prefer aisle seats."}]}
        out = client.runs.wait(thread, "agent", input=said, context={"user_id": "dev-user"})
        assert isinstance(out, dict) and out["messages"][-1]["type"] == "ai", out
    finally:
        rc = stop_with(proc, signal.SIGINT, group=True)
    assert rc == 0, log_tail(log)
    assert not (data / "pg" / "postmaster.pid").exists(), log_tail(log)


def _started_after_reload(log: Path) -> bool:
    _, reloading, after = log.read_text(errors="replace").partition("Reloading")
    return bool(reloading) and "Application started up" in after
