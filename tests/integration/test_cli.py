"""The `memory-agent` CLI as a user runs it: a subprocess on real Postgres + embedded Chroma."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.ports import REPO_ROOT


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent.cli", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


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

    no_model = {k: v for k, v in env.items() if k not in ("MEMORY_AGENT_MODEL", "OPENAI_API_KEY")}
    out = _cli(no_model, "chat", "--user", "u")
    assert out.returncode == 2 and "MEMORY_AGENT_MODEL" in out.stderr

    out = _cli(env, "recall", "x", "--user", "not a valid id")
    assert out.returncode == 2 and "user_id" in out.stderr

    missing = {**env, "MEMORY_EMBEDDING_MODEL_DIR": "/nonexistent/model"}
    out = _cli(missing, "recall", "x", "--user", "u")
    assert out.returncode == 2 and "MEMORY_EMBEDDING_MODEL_DIR" in out.stderr
