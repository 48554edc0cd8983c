"""Lazy exports for a package's ``__init__``: each name is imported from its module on first
use, so ``import qualspec`` (or any of its packages) stays cheap.

    __getattr__, __dir__ = lazy_exports(__name__, {"Store": "qualspec.store._store"})
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

__all__ = ["lazy_exports", "lazy_modules"]


def lazy_exports(
    package: str, where: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` for ``package``.

    Args:
        package: The package's ``__name__``.
        where: Each exported name and the module it lives in: a full module name, or a
            submodule's name within the package (``"_session"``).

    Returns:
        ``(__getattr__, __dir__)``: the first imports the name's module on first use and
        keeps the value on the package, so later lookups are plain attribute reads.
    """

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        full = module if module.startswith("qualspec") else f"{package}.{module}"
        value = getattr(importlib.import_module(full), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return __getattr__, __dir__


def lazy_modules(package: str, names: str) -> dict[str, ModuleType]:
    """The modules ``names`` (space-separated, of ``package``) by name, each imported on
    its first attribute access: a module may name modules it needs only on some paths
    without paying for their imports on the others.

    Each is a stand-in that imports the module with ``importlib.import_module`` and reads
    from it: a second thread that reads while the first still imports waits for the import
    to finish. (``importlib.util.LazyLoader``, used before, let it read the half-imported
    module on Python 3.11: an ``AttributeError`` for a name defined further down.)"""
    out: dict[str, ModuleType] = {}
    for name in names.split():
        full = f"{package}.{name}"
        out[name] = sys.modules.get(full) or _Deferred(full)
    return out


class _Deferred(ModuleType):
    """A module imported on the first read of one of its attributes (see :func:`lazy_modules`)."""

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self.__name__), attr)
