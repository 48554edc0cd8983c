"""Test helpers: a fake OpenAI- and Anthropic-compatible server (``FakeServer``), and
scripted Lab answers and scores for it (``LabScript``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qualspec.testing._fakeserver import FakeServer
    from qualspec.testing._lab import LabScript

__all__ = ["FakeServer", "LabScript"]


def __getattr__(name: str) -> Any:
    if name == "FakeServer":
        from qualspec.testing._fakeserver import FakeServer

        return FakeServer
    if name == "LabScript":
        from qualspec.testing._lab import LabScript

        return LabScript
    raise AttributeError(f"module 'qualspec.testing' has no attribute {name!r}")
