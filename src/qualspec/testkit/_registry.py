"""Where tests come from: the entry point group ``qualspec.tests`` (the built-ins are
registered the same way) or a dotted path ``package.module:TestClass``."""

from __future__ import annotations

import difflib
import functools
import sys
from typing import TYPE_CHECKING, Any

from qualspec.errors import ConfigError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

    from qualspec.testkit._test import PromptResponseTest

__all__ = ["TEST_ENTRY_POINT_GROUP", "available_tests", "load_test"]

TEST_ENTRY_POINT_GROUP = "qualspec.tests"


@functools.lru_cache(maxsize=4)
def _scan(path: tuple[str, ...]) -> dict[str, EntryPoint]:
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=TEST_ENTRY_POINT_GROUP)}


def available_tests() -> dict[str, str]:
    """The registered tests (built-ins and plugins): name -> where it is defined, sorted."""
    return {name: ep.value for name, ep in sorted(_scan(tuple(sys.path)).items())}


def load_test(name: str) -> PromptResponseTest:
    """The test registered as ``name``, or at the dotted path ``module:attribute`` (a
    ``PromptResponseTest`` subclass, or a function returning an instance).

    Raises:
        ConfigError: Unknown, not loadable, or not a test.
    """
    from qualspec.testkit._test import PromptResponseTest

    if ":" in name:
        import importlib

        module_name, _, attr = name.partition(":")
        try:
            found: Any = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(
                f"test {name!r} cannot be loaded ({exc}): give module:TestClass of an "
                "importable module"
            ) from exc
    else:
        eps = _scan(tuple(sys.path))
        ep = eps.get(name)
        if ep is None:
            close = difflib.get_close_matches(name, list(eps), n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            raise ConfigError(
                f"unknown test {name!r}: {hint}registered: {', '.join(sorted(eps)) or '(none)'}"
                "; see qualspec test list, install its plugin or give module:TestClass"
            )
        found = ep.load()
    test = found() if callable(found) else found
    if not isinstance(test, PromptResponseTest):
        raise ConfigError(
            f"test {name!r} is a {type(test).__name__}, not a PromptResponseTest: subclass "
            "qualspec.testkit.PromptResponseTest"
        )
    return test
