"""The store's clock: every time it records is timezone-aware UTC."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["now_utc"]


def now_utc() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)
