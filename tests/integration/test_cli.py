"""The `memory-agent` CLI as a user runs it: a subprocess on real Postgres + embedded Chroma."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.ports import REPO_ROOT, free_port


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(env, *args, timeout=120)


@pytest.fixture
def env(pg_db_url: str, tmp_data_dir: Path) -> dict[str, str]:
    return {**os.environ, "DATABASE_URL": pg_db_url, "MEMORY_DATA_DIR": str(tmp_data_dir)}


def test_remember_recall_why_and_gate(env: dict[str, str]) -> None:
    out = _cli(env, "remember", "I always want metric units.", "--user", "cli-u", "--json")
    assert out.returncode == 0, out.stderr
    [stored] = json.loads(out.stdout)
    assert stored["action"] == "stored" and stored["memory_id"]

    out = _cli(env, "recall", "which units?", "--user", "cli-u", "--json")
    hits = json.loads(out.stdout)
    assert [h["id"] for h in hits] == [stored["memory_id"]]
    b = hits[0]["breakdown"]
    assert b["total"] == pytest.approx(sum(v for k, v in b.items() if k != "total"))

    out = _cli(env, "recall", "which units?", "--user", "someone-else", "--json")
    assert json.loads(out.stdout) == []

    out = _cli(env, "recall", "which units?", "--user", "cli-u", "--explain")
    assert "metric units" in out.stdout and "score" in out.stdout
    # A one-shot command caches nothing: its recall is served by L2 (Chroma + Postgres).
    assert "recall path: l2" in out.stdout
    assert "separate questions" not in out.stdout
    out = _cli(env, "recall", "which units? And when is the party?", "--user", "cli-u", "--explain")
    assert "ranked as separate questions too: which units? | when is the party?" in out.stdout
    # Each result says which question's terms scored it, when one did better than the whole
    # message (here: the units memory, by its own question; the party's, equally by both).
    out = _cli(env, "remember", "The garden party is on Saturday at eight.", "--user", "cli-u")
    assert out.returncode == 0, out.stderr
    asked = ("recall", "which units? And when is the party?", "--user", "cli-u")
    hits = json.loads(_cli(env, *asked, "--json").stdout)
    by_content = {h["content"]: h["question"] for h in hits}
    assert by_content["I always want metric units."] == "which units?"
    assert set(by_content.values()) <= {None, "which units?", "when is the party?"}
    out = _cli(env, *asked, "--explain")
    assert "scored as the question 'which units?'" in out.stdout
    whole = json.loads(_cli(env, "recall", "which units?", "--user", "cli-u", "--json").stdout)
    assert [h["question"] for h in whole] == [None] * len(whole) and whole

    out = _cli(env, "why", stored["memory_id"], "--user", "cli-u")
    assert out.returncode == 0 and "write" in out.stdout

    out = _cli(env, "gate", "thanks, have a nice day!", "--json")
    decision = json.loads(out.stdout)
    assert decision["keep"] is False and decision["category"] == "noise"

    terse = "Max and Daisy."
    out = _cli(env, "gate", terse, "--context", "What are your dogs called?", "--json")
    assert json.loads(out.stdout)["keep"] is True
    out = _cli(env, "gate", terse, "--json")
    assert json.loads(out.stdout)["keep"] is False
    borderline = "Yeah, same! It helps me stay balanced during my studies."
    out = _cli(env, "gate", borderline, "--reply", "Nice! How long have you done it?", "--json")
    assert json.loads(out.stdout)["keep"] is True

    out = _cli(env, "reindex")
    assert out.returncode == 0 and out.stdout.startswith("indexed 0")


def test_clear_errors(env: dict[str, str]) -> None:
    bad_db = {**env, "DATABASE_URL": "postgresql://u:secretpw@127.0.0.1:9/x"}
    out = _cli(bad_db, "recall", "x", "--user", "u")
    assert out.returncode == 2
    assert "Cannot connect to PostgreSQL" in out.stderr and "secretpw" not in out.stderr

    # A model that cannot be loaded fails before the first message, naming what to do.
    # A provider whose integration package is not in this environment (dev dependencies may
    # bring some in: langmem brings langchain-anthropic).
    provider, package = next(
        (p, m.replace("_", "-"))
        for p, m in (("ollama", "langchain_ollama"), ("mistralai", "langchain_mistralai"),
                     ("groq", "langchain_groq"), ("anthropic", "langchain_anthropic"))
        if importlib.util.find_spec(m) is None
    )  # fmt: skip
    missing = {**env, "MEMORY_AGENT_MODEL": f"{provider}:some-model"}
    out = _cli(missing, "chat", "--user", "u")
    assert out.returncode == 2 and package in out.stderr, out.stderr
    assert "No chat model is configured" not in out.stderr
    out = _cli({**env, "MEMORY_AGENT_MODEL": "openai:gpt-4o-mini"}, "chat", "--user", "u")
    assert out.returncode == 2 and "OPENAI_API_KEY" in out.stderr


def _chat(env: dict[str, str], user: str, *lines: str) -> subprocess.CompletedProcess[str]:
    no_model = {k: v for k, v in env.items() if k not in ("MEMORY_AGENT_MODEL", "OPENAI_API_KEY")}
    return subprocess.run(
        [sys.executable, "-m", "agent.cli", "chat", "--user", user],
        cwd=REPO_ROOT, env=no_model, input="\n".join(lines) + "\n",
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip


def test_zero_key_chat_remembers_lists_explains_and_forgets(env: dict[str, str]) -> None:
    out = _chat(env, "chatter", "I prefer green tea over coffee.", "what do I drink?",
                "/memories", "/help", "/quit")  # fmt: skip
    assert out.returncode == 0, out.stderr
    replies = [line for line in out.stdout.splitlines() if "agent> " in line]
    assert len(replies) == 2 and all("[memory-only mode" in r for r in replies)
    assert "green tea" in out.stdout.split("what do I drink?")[-1] or "green tea" in replies[1]
    listed = [line for line in out.stdout.splitlines() if "green tea" in line and "· " in line]
    assert listed, out.stdout
    short = listed[-1].split("[", 1)[1][:8]
    assert "/forget ID" in out.stdout  # /help
    assert "INFO" not in out.stdout and "WARNING" not in out.stdout  # logs went to a file

    out = _chat(env, "chatter", f"/why {short}", f"/forget {short}", "/memories", "/why zz")
    assert out.returncode == 0, out.stderr
    assert "write" in out.stdout and f"forgot {short}" in out.stdout.replace("-", "")
    assert "(no memories yet)" in out.stdout
    # Another user cannot reach it: ids resolve only among the caller's own memories.
    out = _chat(env, "intruder", f"/why {short}")
    assert "no single memory of yours matches" in out.stdout


def test_json_only_with_json_and_forget_one_memory(env: dict[str, str]) -> None:
    out = _cli(env, "remember", "My flight leaves from gate B12 on Friday.", "--user", "f1")
    assert out.returncode == 0 and not out.stdout.lstrip().startswith(("{", "["))
    out = _cli(env, "recall", "flight", "--user", "f1", "--json")
    [hit] = json.loads(out.stdout)
    for args in (("recall", "flight"), ("why", hit["id"]), ("gate", "I like jazz.")):
        extra = () if args[0] == "gate" else ("--user", "f1")
        out = _cli(env, *args, *extra)
        assert out.returncode == 0 and not out.stdout.lstrip().startswith(("{", "[")), out.stdout
    out = _cli(env, "forget", "--user", "other", "--memory", hit["id"])
    assert out.returncode == 1 and "has no memory" in out.stderr
    out = _cli(env, "forget", "--user", "f1", "--memory", hit["id"])
    assert out.returncode == 0 and f"forgot memory {hit['id']}" in out.stdout
    assert not out.stdout.lstrip().startswith("{")
    out = _cli(env, "recall", "flight", "--user", "f1", "--json")
    assert json.loads(out.stdout) == []

    out = _cli(env, "recall", "x", "--user", "not a valid id")
    assert out.returncode == 2 and "user_id" in out.stderr

    missing = {**env, "MEMORY_EMBEDDING_MODEL_DIR": "/nonexistent/model"}
    out = _cli(missing, "recall", "x", "--user", "u")
    assert out.returncode == 2 and "MEMORY_EMBEDDING_MODEL_DIR" in out.stderr


def test_the_short_ids_the_cli_shows_are_taken_by_why_and_forget(env: dict[str, str]) -> None:
    env = {k: v for k, v in env.items() if k != "XDG_RUNTIME_DIR"}  # as in containers and SSH
    out = _cli(env, "remember", "My locker at the gym is number 41.", "--user", "s1")
    assert out.returncode == 0, out.stderr
    assert "Warning" not in out.stderr, out.stderr  # platformdirs' RuntimeDirWarning
    out = _cli(env, "recall", "gym locker", "--user", "s1")
    # "1. [a1b2c3d4 · 2026-12-05 · episodic] My locker ..." is what a user copies.
    short = out.stdout.split("[", 1)[1].split(" ", 1)[0]
    assert len(short) == 8, out.stdout
    full = json.loads(_cli(env, "recall", "gym locker", "--user", "s1", "--json").stdout)[0]["id"]
    assert full.replace("-", "").startswith(short) and full != short
    out = _cli(env, "why", short, "--user", "s1")
    assert out.returncode == 0 and full in out.stdout and "locker" in out.stdout, out.stdout
    # Another user's short id names nothing of theirs.
    out = _cli(env, "why", short, "--user", "s2")
    assert out.returncode == 1 and "no memory" in out.stdout
    out = _cli(env, "forget", "--user", "s2", "--memory", short)
    assert out.returncode == 1 and "has no memory" in out.stderr
    out = _cli(env, "forget", "--user", "s1", "--memory", short)
    assert out.returncode == 0 and f"forgot memory {full}" in out.stdout, out.stdout + out.stderr
    assert json.loads(_cli(env, "recall", "gym locker", "--user", "s1", "--json").stdout) == []


def test_chat_goes_on_when_the_model_is_down_and_still_remembers(env: dict[str, str]) -> None:
    # A model server that refuses connections: nothing listens on the port.
    down = {**env, "MEMORY_AGENT_MODEL": "openai:gpt-4o-mini", "OPENAI_API_KEY": "sk-test",
            "OPENAI_BASE_URL": f"http://127.0.0.1:{free_port()}/v1"}  # fmt: skip
    out = subprocess.run(
        [sys.executable, "-m", "agent.cli", "chat", "--user", "outage"],
        cwd=REPO_ROOT, env=down, capture_output=True, text=True, timeout=180, check=False,
        input="My gym locker is number 41.\nAnd my bike is blue.\n/memories\n",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    assert "Traceback" not in out.stdout + out.stderr
    replies = [line for line in out.stdout.splitlines() if "agent> " in line]
    assert len(replies) == 2, out.stdout  # the chat went on to the second message
    assert all("the chat model did not answer (" in r for r in replies), replies
    listed = [line for line in out.stdout.splitlines() if "· " in line]
    assert any("locker is number 41" in line for line in listed), out.stdout


def test_dev_refuses_a_busy_port_instead_of_serving_elsewhere(env: dict[str, str]) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = _cli(env, "dev", "--port", str(port), "--no-browser")
    assert out.returncode == 2
    assert f"port {port} on 127.0.0.1 is in use" in out.stderr and "--port" in out.stderr
    assert "Traceback" not in out.stderr


def test_dev_with_an_unreachable_database_says_so_in_one_line(env: dict[str, str]) -> None:
    port = free_port()  # nothing listens there
    down = {**env, "DATABASE_URL": f"postgresql://u:pw@127.0.0.1:{port}/db"}
    out = _cli(down, "dev", "--port", str(free_port()), "--no-browser")
    assert out.returncode == 2
    [line] = out.stderr.strip().splitlines()
    assert line.startswith("error: Cannot connect to PostgreSQL at postgresql://…@127.0.0.1:")
    assert "DATABASE_URL" in line and "pw" not in line


def _as_from_a_terminal() -> None:
    # A job started in the background by a non-interactive shell (as CI runners may start the
    # suite) inherits SIGINT ignored, and a thread that spawned multiprocessing's resource
    # tracker briefly blocks it; a program rightly keeps either. A chat started at a terminal,
    # as a user starts it, has the default, unblocked.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def test_ctrl_c_at_the_chat_prompt_leaves_the_chat(env: dict[str, str]) -> None:
    no_model = {k: v for k, v in env.items() if k not in ("MEMORY_AGENT_MODEL", "OPENAI_API_KEY")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent.cli", "chat", "--user", "ctrl-c"],
        cwd=REPO_ROOT, env=no_model, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, preexec_fn=_as_from_a_terminal,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        seen = b""
        while not seen.endswith(b"you> "):  # the prompt, waiting for a line that never comes
            chunk = proc.stdout.read(1)
            assert chunk, seen.decode() + (proc.stderr.read() if proc.stderr else b"").decode()
            seen += chunk
        proc.send_signal(signal.SIGINT)
        # communicate, not wait: it drains both pipes, and a child blocked writing to a full
        # one would never exit (the Popen.wait deadlock).
        _, err_bytes = proc.communicate(timeout=60)  # before: input() kept it until Enter
        err = err_bytes.decode()
        assert proc.returncode == 130 and "Traceback" not in err, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_dev_refuses_a_second_server_on_the_same_data(env: dict[str, str]) -> None:
    from filelock import FileLock

    data = Path(env["MEMORY_DATA_DIR"])
    data.mkdir(parents=True, exist_ok=True)
    # What a running `memory-agent dev` holds for as long as it serves this data.
    with FileLock(str(data / ".memory-agent-dev.lock")):
        out = _cli(env, "dev", "--port", str(free_port()), "--no-browser")
    assert out.returncode == 2, out.stderr
    assert f"another `memory-agent dev` serves the data in {data}" in out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_why_shows_a_timeline_and_restore_undoes_a_wrong_update(env: dict[str, str]) -> None:
    out = _cli(env, "remember", "I live in Berlin.", "--user", "t1", "--json")
    [berlin] = json.loads(out.stdout)
    out = _cli(env, "remember", "I moved to Munich last month.", "--user", "t1", "--json")
    [munich] = json.loads(out.stdout)
    assert munich["action"] == "superseded", munich
    out = _cli(env, "why", munich["memory_id"][:8], "--user", "t1")
    assert out.returncode == 0, out.stderr
    timeline = out.stdout.split("timeline (oldest first):", 1)[1].splitlines()
    assert "Berlin" in timeline[1] and "[superseded]" in timeline[1] and "supersede:" in timeline[1]
    assert "Munich" in timeline[2] and timeline[2].lstrip().startswith("→")
    data = json.loads(_cli(env, "why", berlin["memory_id"], "--user", "t1", "--json").stdout)
    assert [s["content"] for s in data["timeline"]] == [
        "I live in Berlin.",
        "I moved to Munich last month.",
    ]
    # Said today, Berlin held until today; Munich from the first of last month (its own words).
    assert data["timeline"][0]["valid_to"] is not None
    assert data["timeline"][1]["valid_from"].endswith("-01T00:00:00+00:00")
    # Another user cannot restore it; the owner can, by the short id `why` shows.
    out = _cli(env, "restore", berlin["memory_id"][:8], "--user", "t2")
    assert out.returncode == 1 and "Munich" not in out.stdout + out.stderr
    out = _cli(env, "restore", berlin["memory_id"][:8], "--user", "t1")
    assert out.returncode == 0 and "restored" in out.stdout, out.stderr
    hits = json.loads(_cli(env, "recall", "Where do I live?", "--user", "t1", "--json").stdout)
    assert "Berlin" in hits[0]["content"] and all("Munich" not in h["content"] for h in hits)
    out = _cli(env, "why", munich["memory_id"], "--user", "t1")
    assert "marked_wrong" in out.stdout, out.stdout
    out = _cli(env, "restore", berlin["memory_id"], "--user", "t1")
    assert out.returncode == 1 and "only a value that an update replaced" in out.stderr
