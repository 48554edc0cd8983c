"""Cache entries made up for the tests of the cache's expiry (``tests/store``,
``tests/cli``)."""

from __future__ import annotations

from datetime import datetime, timedelta

from qualspec.store import CacheEntry


def cache_entry(key: str, kind: str, created: datetime, lifetime: timedelta | None) -> CacheEntry:
    """An ``openai/m`` entry of ``kind`` written at ``created``, expiring ``lifetime``
    later (never with None); its text ``cached <key>``."""
    return CacheEntry(
        key=key,
        kind=kind,
        provider="openai",
        model="m",
        text=f"cached {key}",
        finish_reason="stop",
        input_tokens=1,
        output_tokens=1,
        effective_temperature=None,
        structured=None,
        created_at=created,
        expires_at=None if lifetime is None else created + lifetime,
    )
