"""Every third-party package the code imports is declared in pyproject.toml.

A package that only arrives as a dependency of another one can disappear when that one changes;
declaring what we import keeps an install working. The package code (agent, memory, prompts) may
rely on `[project] dependencies` and the optional extras; tests and benchmarks also on the
dependency groups.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import sys
import tomllib
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OURS = {"agent", "memory", "prompts", "bench", "tests", "examples"}
# Modules of the LangGraph server itself, imported only by code that runs inside it (the server
# provides them: `langgraph dev` through the `local` group, a deployment through its image).
SERVER_PROVIDED = {"langgraph_api", "langgraph_runtime"}


def _name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match.group(0)).lower()


def _declared() -> tuple[set[str], set[str]]:
    """(runtime names, runtime plus development names), normalised."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    runtime = {_name(r) for r in project["project"]["dependencies"]}
    for extra in project["project"].get("optional-dependencies", {}).values():
        runtime |= {_name(r) for r in extra}
    groups = {_name(r) for g in project["dependency-groups"].values() for r in g}
    return runtime, runtime | groups


def _imports(package: str) -> dict[str, Path]:
    """Absolute imports of third-party modules in `package`: module name -> a file using it."""
    found: dict[str, Path] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top in OURS or top == "__future__":
                    continue
                found.setdefault(name, path)
    return found


@cache
def _top_level() -> dict[str, list[str]]:
    return dict(md.packages_distributions())


@cache
def _files_of(dist: str) -> frozenset[str]:
    return frozenset(str(f) for f in md.distribution(dist).files or ())


def _distributions(module: str) -> set[str]:
    """The installed distributions that provide `module` (the most specific match wins)."""
    candidates = _top_level().get(module.split(".")[0], [])
    parts = module.split(".")
    for depth in range(len(parts), 0, -1):
        prefix = "/".join(parts[:depth])
        owners = {
            d
            for d in candidates
            if any(f == f"{prefix}.py" or f.startswith(f"{prefix}/") for f in _files_of(d))
        }
        if owners:
            return {_name(d) for d in owners}
    return {_name(d) for d in candidates}


def _undeclared(packages: list[str], declared: set[str]) -> list[str]:
    missing = []
    for package in packages:
        for module, path in _imports(package).items():
            if module.split(".")[0] in SERVER_PROVIDED:
                continue
            dists = _distributions(module)
            if not dists:
                missing.append(f"{module} ({path.relative_to(ROOT)}): not installed")
            elif not dists & declared:
                missing.append(f"{module} ({path.relative_to(ROOT)}): declare {sorted(dists)}")
    return missing


def test_package_imports_are_declared_dependencies() -> None:
    runtime, _ = _declared()
    assert _undeclared(["agent", "memory", "prompts"], runtime) == []


def test_test_and_bench_imports_are_declared() -> None:
    _, everything = _declared()
    assert _undeclared(["bench", "tests", "examples"], everything) == []
