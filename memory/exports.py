"""Package exports loaded on first use.

A package's `__init__.py` names its public API in `__all__`, but importing every submodule up
front would make `import memory.types` open the embedding model, Chroma and asyncpg. Instead a
package maps each exported name to the module that defines it and installs the `__getattr__`
made here, so `from memory.storage import MemoryStore` imports `memory.storage.store` then.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: each name in `where` is read from its module.

    A module name starting with "." is relative to `package`; any other is absolute.
    """

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module, package), name)

    return __getattr__


__all__ = ["lazy_exports"]
