"""Where tests come from: the entry point group ``qualspec.tests`` (the built-ins are
registered the same way) or a dotted path ``package.module:TestClass``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from qualspec.errors import ConfigError
from qualspec.plugins import Registry

if TYPE_CHECKING:
    from qualspec.testkit._test import PromptResponseTest

__all__ = ["TEST_ENTRY_POINT_GROUP", "available_tests", "load_test"]

TEST_ENTRY_POINT_GROUP = "qualspec.tests"


REGISTRY = Registry(
    TEST_ENTRY_POINT_GROUP,
    "test",
    "module:TestClass",
    "see qualspec test list, install its plugin or give module:TestClass",
)
"""The tests: entry points ``qualspec.tests`` or ``module:TestClass``."""


def available_tests() -> dict[str, str]:
    """The registered tests (built-ins and plugins): name -> where it is defined, sorted."""
    return {name: ep.value for name, ep in sorted(REGISTRY.entry_points().items())}


def load_test(name: str) -> PromptResponseTest:
    """The test registered as ``name``, or at the dotted path ``module:attribute`` (a
    ``PromptResponseTest`` subclass, or a function returning an instance).

    Raises:
        ConfigError: Unknown, not loadable, or not a test.
    """
    from qualspec.testkit._test import PromptResponseTest

    found: Any = REGISTRY.load(name)
    test = found() if callable(found) else found
    if not isinstance(test, PromptResponseTest):
        raise ConfigError(
            f"test {name!r} is a {type(test).__name__}, not a PromptResponseTest: subclass "
            "qualspec.testkit.PromptResponseTest"
        )
    return test
