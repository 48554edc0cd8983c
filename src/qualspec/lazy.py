"""Lazy exports for a package's ``__init__``: each name is imported from its module on first
use, so ``import qualspec`` (or any of its packages) stays cheap.

    __getattr__, __dir__ = lazy_exports(__name__, {"Store": "qualspec.store._store"})
"""

from __future__ import annotations

import importlib
import importlib.util
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
    """The modules ``names`` (space-separated, of ``package``) by name, each loaded on its
    first attribute access (``importlib.util.LazyLoader``): a module may name modules it
    needs only on some paths without paying for their imports on the others."""
    out = {}
    for name in names.split():
        full = f"{package}.{name}"
        found = sys.modules.get(full)
        if found is None:
            spec = importlib.util.find_spec(full)
            if spec is None or spec.loader is None:
                raise ModuleNotFoundError(f"no module named {full!r}", name=full)
            spec.loader = importlib.util.LazyLoader(spec.loader)
            found = importlib.util.module_from_spec(spec)
            sys.modules[full] = found
            spec.loader.exec_module(found)
        out[name] = found
    return out
