"""One plugin registry for every kind of plugin: providers, evaluators and tests.

A :class:`Registry` is an entry-point group (the built-ins are registered in qualspec's
own ``pyproject.toml`` the same way as a plugin's) plus, where the group allows it, a
dotted path ``package.module:attribute`` for what is not installed as a plugin. An unknown
name is answered with the closest registered one ("did you mean ...?") and the list.

The lowest layer of the package: it imports only :mod:`qualspec.errors` and
:mod:`qualspec.messages`, so each layer's registry (``providers``, ``engine``, ``testkit``)
is one instance of it.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from qualspec.errors import ConfigError
from qualspec.messages import did_you_mean

if TYPE_CHECKING:
    from importlib.metadata import Distribution, EntryPoint

__all__ = ["Registry", "load_path", "scan_installed"]


def _scan(group: str, path: tuple[str, ...]) -> dict[str, EntryPoint]:
    """A group's entry points, read once per ``sys.path``: a scan reads the metadata of
    every installed package (milliseconds each time, and a run looks several times)."""
    return _scan_group(group, path)


@functools.lru_cache(maxsize=64)
def _scan_group(group: str, path: tuple[str, ...]) -> dict[str, EntryPoint]:
    """One group's entry points by name, selected from the one scan of every package.

    Only the groups asked for are selected (a run asks for two or three): selecting every
    group of the environment (dozens) walked every entry point once per group, as long
    as the scan itself."""
    return {ep.name: ep for ep in _scan_all(path).select(group=group)}


def scan_installed() -> None:
    """Read every installed package's entry points now (once per ``sys.path``), before
    the first pydantic model is validated: pydantic then reads them no second time (see
    :func:`_spare_pydantic_scan`)."""
    _scan_all(tuple(sys.path))


@functools.lru_cache(maxsize=16)
def _scan_all(path: tuple[str, ...]) -> Any:
    """The entry points of qualspec's groups and pydantic's, of every installed package
    (as ``importlib.metadata.entry_points()`` finds them: the first copy of a package on
    ``sys.path``), read once per ``sys.path``: one scan for all groups (a run looks up
    providers and evaluators, and each scan reads every package's metadata)."""
    from importlib import metadata

    found = metadata.EntryPoints(_entry_points(metadata.distributions()))
    if not found.select(group=_PYDANTIC_GROUP):
        _spare_pydantic_scan()
    return found


_PYDANTIC_GROUP = "pydantic"  # pydantic.plugin._loader.PYDANTIC_ENTRY_POINT_GROUP
_SCANNED = ("qualspec", _PYDANTIC_GROUP)  # what the groups read from the scan start with


def _entry_points(distributions: Iterable[Distribution]) -> list[EntryPoint]:
    """The entry points of every package whose ``entry_points.txt`` names a group that
    starts with one of :data:`_SCANNED`, each package once (the first by its normalised
    name, as ``importlib.metadata.entry_points()``).

    Only such a package's ``entry_points.txt`` is parsed: an
    environment's other packages declare hundreds of console scripts and plugins of other
    tools (parsing them all was most of the scan), and one of them that is malformed no
    longer stops every ``qualspec`` command."""
    seen: set[str] = set()
    found: list[EntryPoint] = []
    for dist in distributions:
        name = getattr(dist, "_normalized_name", None) or _normalized(dist.metadata["Name"])
        if name in seen:
            continue
        seen.add(name)
        text = dist.read_text("entry_points.txt")
        if text and any(group in text for group in _SCANNED):
            found.extend(dist.entry_points)
    return found


def _normalized(name: str | None) -> str:
    """A package name as ``importlib.metadata`` compares them (PEP 503, ``_`` for ``-``)."""
    import re

    return re.sub(r"[-_.]+", "-", name or "").lower().replace("-", "_")


def _spare_pydantic_scan() -> None:
    """Tell pydantic that no package installs a pydantic plugin, which the scan above
    just found: pydantic's own scan (the first time a model is validated, every installed
    package's entry points read again: 5-10 ms of a ``qualspec run``) would find the same
    empty set and cache it (``_loader._plugins = {}``); this caches it first.

    Nothing changes where a plugin is installed (pydantic scans and loads it as before),
    where ``PYDANTIC_DISABLE_PLUGINS`` is set (read before the cache), or where pydantic
    scanned already or its loader is not laid out as in pydantic 2 (left alone). The one
    difference: pydantic reads every copy of a package installed twice on ``sys.path``,
    this scan (as ``importlib.metadata.entry_points()``) the first copy only, so a plugin
    declared only by a shadowed copy would not be loaded.
    """
    import importlib

    try:
        loader = importlib.import_module("pydantic.plugin._loader")
    except ImportError:  # pragma: no cover - pydantic is a dependency
        return
    if getattr(loader, "_plugins", ()) is None and not getattr(loader, "_loading_plugins", True):
        setattr(loader, "_plugins", {})  # noqa: B010 - pydantic's own cache: see the docstring


def load_path(path: str, what: str, form: str) -> Any:
    """The attribute a dotted path ``module:attribute`` names (``attribute`` may be
    dotted, ``module:Class.create``, as in an entry point).

    Raises:
        ConfigError: The module cannot be imported or lacks the attribute; the message
            names ``what`` is loaded and the ``form`` expected (``module:factory``).
    """
    import importlib

    module_name, _, attr = path.partition(":")
    try:
        found: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            found = getattr(found, part)
        return found
    except (ImportError, AttributeError) as exc:
        raise ConfigError(
            f"{what} {path!r} cannot be loaded ({exc}): give {form} of an importable module"
        ) from exc


@dataclass(frozen=True, slots=True)
class Registry:
    """The plugins of one entry-point group.

    Attributes:
        group: The entry-point group (``qualspec.evaluators``).
        what: What a plugin is, in messages (``evaluator type``).
        form: The dotted-path form accepted besides a registered name
            (``module:factory``), or None when only registered names are accepted.
        advice: What to do about an unknown name, ending the message.

    Example::

        tests = Registry("qualspec.tests", "test", "module:TestClass", "install its plugin")
        found = tests.load("refusal")  # the object its entry point names
    """

    group: str
    what: str
    form: str | None = None
    advice: str = "install its plugin"

    def entry_points(self) -> Mapping[str, EntryPoint]:
        """The group's entry points by name (read once per ``sys.path``)."""
        return _scan(self.group, tuple(sys.path))

    def names(self) -> list[str]:
        """The registered names (built-ins and plugins), sorted."""
        return sorted(self.entry_points())

    def hint(self, name: str, options: list[str] | None = None) -> str:
        """``"did you mean 'x'? "`` for the name closest to ``name``, or ``""``."""
        return did_you_mean(name, self.names() if options is None else options, after=" ")

    def unknown(self, name: str) -> ConfigError:
        """The error for a name that is not registered: did-you-mean and the list."""
        eps = self.entry_points()
        return ConfigError(
            f"unknown {self.what} {name!r}: {self.hint(name, list(eps))}registered: "
            f"{', '.join(sorted(eps)) or '(none)'}; {self.advice}"
        )

    def load(self, name: str) -> Any:
        """What ``name`` names: a registered entry point, or (when the registry accepts
        dotted paths) ``module:attribute``.

        Raises:
            ConfigError: Unknown (with the closest registered name), or not loadable.
        """
        if self.form is not None and ":" in name:
            return load_path(name, self.what, self.form)
        ep = self.entry_points().get(name)
        if ep is None:
            raise self.unknown(name)
        return ep.load()
