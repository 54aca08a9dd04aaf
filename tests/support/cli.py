"""Run `memory-agent` (the `agent.cli` module) as a user would: a fresh process, its output."""

from __future__ import annotations

import subprocess
import sys

from tests.support.ports import REPO_ROOT


def run_cli(
    env: dict[str, str], *args: str, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """`python -m agent.cli ARGS` in the repository with `env`; never raises on a non-zero exit."""
    return subprocess.run(
        [sys.executable, "-m", "agent.cli", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
