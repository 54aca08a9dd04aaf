"""Wall time of `memory-agent --help`, `remember` and `recall` on the embedded defaults.

    python -m bench.cli_timing [--runs 5] [--no-compile] [--json OUT]

Each command runs as a fresh process, as a user types it: the embedded PostgreSQL starts and
stops with it, embedded Chroma opens its folder, the ONNX model loads. Bytecode is compiled
first (`python -m compileall` over the environment and the project), as `uv sync
--compile-bytecode` or a pip install does on a user's machine; machines that set
PYTHONDONTWRITEBYTECODE=1 would otherwise recompile every import on every start (~7 s).
A warm-up `remember` (creating the database, not timed) runs first. The baseline measured in
the same run is a bare interpreter start (`python -c pass`): the ratio says how much the
command costs on top of Python itself. Targets: --help <= 0.3 s, remember/recall <= 1.5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGETS = {"--help": 0.3, "remember": 1.5, "recall": 1.5}


def _compile() -> float:
    start = time.perf_counter()
    paths = [
        sysconfig.get_paths()["purelib"],
        *(str(REPO / p) for p in ("agent", "memory", "prompts")),
    ]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cmd = [sys.executable, "-m", "compileall", "-q", "-j", "0", *paths]
    subprocess.run(cmd, env=env, capture_output=True, check=False)
    return time.perf_counter() - start


def _time(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-compile", action="store_true", help="skip compiling bytecode")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    compiled = None if args.no_compile else _compile()
    exe = str(Path(sys.executable).parent / "memory-agent")
    work = Path(tempfile.mkdtemp(prefix="lma-cli-timing-"))
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # use (and keep) the compiled bytecode
    env.update({"MEMORY_DATA_DIR": str(work / ".data"), "ANONYMIZED_TELEMETRY": "False",
                "ORT_DISABLE_TELEMETRY": "1", "LANGSMITH_TRACING": "false"})  # fmt: skip
    for key in ("DATABASE_URL", "DATABASE_URI", "POSTGRES_URI", "CHROMA_URL"):
        env.pop(key, None)  # the embedded defaults, as a new user has them

    commands = {
        "--help": [exe, "--help"],
        "remember": [exe, "remember", "I prefer green tea over coffee.", "--user", "bench"],
        "recall": [exe, "recall", "what do I drink?", "--user", "bench"],
    }
    _time(commands["remember"], env, work)  # warm-up: creates the database (not timed)
    baseline = [_time([sys.executable, "-c", "pass"], env, work) for _ in range(args.runs)]
    figures: dict[str, dict[str, float]] = {}
    for name, cmd in commands.items():
        runs = [_time(cmd, env, work) for _ in range(args.runs)]
        figures[name] = {"median_s": statistics.median(runs), "min_s": min(runs),
                         "max_s": max(runs)}  # fmt: skip
    base = statistics.median(baseline)

    print(f"cli_timing: {args.runs} runs each, embedded Postgres + Chroma in {work}")
    print("bytecode: " + (f"compiled first ({compiled:.1f} s)" if compiled is not None
                          else "not compiled (--no-compile)"))  # fmt: skip
    print(f"baseline `python -c pass`: median {base:.3f} s")
    print(f"{'command':<10} {'median':>8} {'min':>8} {'max':>8} {'x base':>8} {'target':>8}  ok")
    for name, f in figures.items():
        ok = "yes" if f["median_s"] <= TARGETS[name] else "NO"
        print(f"{name:<10} {f['median_s']:>7.3f}s {f['min_s']:>7.3f}s {f['max_s']:>7.3f}s "
              f"{f['median_s'] / base:>7.1f}x {TARGETS[name]:>7.1f}s  {ok}")  # fmt: skip
    shutil.rmtree(work, ignore_errors=True)  # the embedded stores stopped with each command
    if args.json:
        args.json.write_text(json.dumps({"baseline_s": base, "commands": figures,
                                         "compiled": compiled is not None}, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
