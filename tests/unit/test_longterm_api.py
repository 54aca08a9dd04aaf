"""The public API of `memory.longterm` and its consolidation subpackage resolves to its objects."""

from __future__ import annotations

import importlib
import pkgutil
import types

import pytest

import memory.longterm
import memory.longterm.consolidation as consolidation


@pytest.mark.parametrize("package", [memory.longterm, consolidation])
def test_every_exported_name_is_the_object_not_a_submodule(package: types.ModuleType) -> None:
    # Importing every submodule first: a submodule named like an exported function would
    # replace the function on the package.
    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{info.name}")
    for name in package.__all__:
        value = getattr(package, name)
        assert not isinstance(value, types.ModuleType), name
        assert getattr(value, "__module__", package.__name__).startswith(package.__name__), name


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError):
        _ = consolidation.no_such_name  # type: ignore[attr-defined]
