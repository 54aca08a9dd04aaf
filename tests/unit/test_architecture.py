"""The layering rules, checked on the source with `ast` so they keep holding as the code grows.

Every import counts: module level, function-local and `if TYPE_CHECKING:` ones alike. A cycle
held apart by a deferred import is still two modules that cannot be understood apart, and an
upward import hidden in a function still makes the lower layer depend on the upper one.

- `memory/` and `prompts/` never import `agent/` (the agent composes them, not the reverse).
- `memory/storage` is the bottom layer: it imports only itself and the top-level
  `memory/*.py` modules that do not themselves import a `memory` subpackage.
- No import cycle among the modules of `agent/`, `memory/` and `prompts/`, and none among the
  subpackages of `memory/` either (each arrow between them points one way).
- SQL is written only under `memory/storage/`; everything else calls storage's functions.
- Nothing outside `memory/storage/` reaches into a storage object's private attributes.
- Every package says what it exports (`__all__`), and every name it lists exists.
"""

from __future__ import annotations

import ast
import graphlib
import importlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("agent", "memory", "prompts")
# Words that make a string literal SQL: a statement keyword followed by its clause keyword, so
# prose such as "select a model" or "update the profile" does not count.
_SQL = re.compile(
    r"\bSELECT\s|\bINSERT\s+INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b"
    r"|\bFROM\s+\w+\s+WHERE\b|\bCREATE\s+(?:TABLE|INDEX)\b|\bALTER\s+TABLE\b"
    r"|\bpg_(?:advisory|notify)"
)
# Attributes of storage objects (the store, its index, its pool) that only storage may use.
_STORAGE_HANDLES = ("store", "index", "pool", "_store", "memory_store")


@dataclass
class Module:
    name: str
    path: Path
    tree: ast.Module
    imports: set[str] = field(default_factory=set)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _load() -> dict[str, Module]:
    modules: dict[str, Module] = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            modules[_module_name(path)] = Module(
                _module_name(path), path, ast.parse(path.read_text(encoding="utf-8"))
            )
    for module in modules.values():
        module.imports = set(_imports(module, modules))
    return modules


def _resolve(name: str, modules: dict[str, Module]) -> str | None:
    """The project module an import names (`a.b.c` may be module `a.b` and its attribute c)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(module: Module, modules: dict[str, Module]) -> Iterator[str]:
    is_package = module.path.name == "__init__.py"
    for node in ast.walk(module.tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.name.split(".")
                if not is_package:
                    anchor = anchor[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        for target in targets:
            found = _resolve(target, modules)
            # A module's own package (`__init__`) runs before it anyway: not an arrow.
            if found and found != module.name and not module.name.startswith(found + "."):
                yield found


def _memory_subpackage(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if parts[0] == "memory" and len(parts) > 2 else None


MODULES = _load()


def test_the_walk_sees_the_code() -> None:
    # A checker that finds nothing would pass every rule below.
    assert len([m for m in MODULES if m.startswith("memory.storage.")]) >= 5
    assert any(m.imports for m in MODULES.values() if m.name.startswith("agent."))


def test_memory_and_prompts_never_import_agent() -> None:
    offenders = [
        (m.name, target)
        for m in MODULES.values()
        if m.name.split(".")[0] in ("memory", "prompts")
        for target in m.imports
        if target.split(".")[0] == "agent"
    ]
    assert offenders == []


def _imports_a_subpackage(name: str) -> bool:
    return any(_memory_subpackage(t) is not None for t in MODULES[name].imports)


def test_storage_is_the_bottom_layer() -> None:
    offenders = []
    for m in MODULES.values():
        if _memory_subpackage(m.name) != "storage":
            continue
        for target in m.imports:
            if not target.startswith("memory"):
                continue
            sub = _memory_subpackage(target)
            if sub == "storage":
                continue
            # A top-level memory/*.py module is allowed when it stays below storage itself.
            if sub is None and target != "memory" and not _imports_a_subpackage(target):
                continue
            offenders.append((m.name, target))
    assert offenders == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(sorted(graph[root])))]
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_between_modules() -> None:
    assert _cycles({name: m.imports for name, m in MODULES.items()}) == []


def test_memory_subpackages_form_layers() -> None:
    graph: dict[str, set[str]] = {}
    for m in MODULES.values():
        source = _memory_subpackage(m.name)
        if source is None:
            continue
        for target in m.imports:
            sub = _memory_subpackage(target)
            if sub is not None and sub != source:
                graph.setdefault(source, set()).add(sub)
    try:
        order = list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as exc:
        pytest.fail(f"memory subpackages import each other in a circle: {exc.args[1]}")
    assert order[0] == "storage" or "storage" not in graph


def _string_literals(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value
        elif isinstance(node, ast.JoinedStr):
            text = "".join(
                v.value
                for v in node.values
                if isinstance(v, ast.Constant) and isinstance(v.value, str)
            )
            yield node.lineno, text


def _docstrings(tree: ast.AST) -> set[int]:
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                lines.add(body[0].value.lineno)
    return lines


def _regex_lines(tree: ast.AST) -> set[int]:
    # A pattern that recognises SQL in user text (`re.compile(r"...SELECT...")`) is not SQL.
    lines = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re"
        ):
            lines.update(n.lineno for n in ast.walk(node) if isinstance(n, ast.Constant))
    return lines


def test_sql_only_in_storage() -> None:
    offenders = []
    for m in MODULES.values():
        if _memory_subpackage(m.name) == "storage":
            continue
        skip = _docstrings(m.tree) | _regex_lines(m.tree)
        for line, text in _string_literals(m.tree):
            if line not in skip and _SQL.search(text):
                offenders.append(f"{m.path.relative_to(REPO)}:{line}")
    assert offenders == []


def test_sql_detector_sees_sql_and_not_prose() -> None:
    assert _SQL.search("SELECT id FROM memories WHERE user_id = $1")
    assert _SQL.search("UPDATE memories SET status = 'deleted'")
    assert not _SQL.search("select a model from the list")
    assert not _SQL.search("the gate may update the profile")
    assert _SQL.search(" FROM memories WHERE tenant_id = $1")  # the tail of a concatenation


def test_no_private_storage_access_outside_storage() -> None:
    offenders = []
    for m in MODULES.values():
        if _memory_subpackage(m.name) == "storage":
            continue
        for node in ast.walk(m.tree):
            if not (isinstance(node, ast.Attribute) and node.attr.startswith("_")):
                continue
            if node.attr.startswith("__"):
                continue
            owner = node.value
            handle = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
            if handle in _STORAGE_HANDLES:
                offenders.append(f"{m.path.relative_to(REPO)}:{node.lineno} .{handle}.{node.attr}")
    assert offenders == []


PACKAGE_INITS = sorted(name for name, m in MODULES.items() if m.path.name == "__init__.py")


@pytest.mark.parametrize("package", PACKAGE_INITS)
def test_package_declares_its_exports(package: str) -> None:
    module = importlib.import_module(package)
    exported = getattr(module, "__all__", None)
    assert isinstance(exported, list | tuple), f"{package} has no __all__"
    missing = [name for name in exported if not hasattr(module, name)]
    assert missing == []


_OUTSIDE_REFERENCE = re.compile(r"\bseeds? ?\d{3}\b|\bDESIGN(?:\.md)? ?§|§ ?\d", re.IGNORECASE)


def test_comments_are_self_contained() -> None:
    # A comment that says "see seed 002 §5" explains nothing to a reader of this repository.
    offenders = [
        f"{m.path.relative_to(REPO)}:{n}"
        for m in MODULES.values()
        for n, line in enumerate(m.path.read_text(encoding="utf-8").splitlines(), 1)
        if _OUTSIDE_REFERENCE.search(line)
    ]
    assert offenders == []
    assert _OUTSIDE_REFERENCE.search("(seed 002 §五)") and _OUTSIDE_REFERENCE.search("DESIGN §7")
