"""Test helpers: a fake OpenAI- and Anthropic-compatible server (``FakeServer``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qualspec.testing._fakeserver import FakeServer

__all__ = ["FakeServer"]


def __getattr__(name: str) -> Any:
    if name == "FakeServer":
        from qualspec.testing._fakeserver import FakeServer

        return FakeServer
    raise AttributeError(f"module 'qualspec.testing' has no attribute {name!r}")
