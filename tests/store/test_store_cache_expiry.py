"""Issue 17, item 11 (follow-up): ``cache_stats`` and ``cache_clear(expired_only=True)``
with ``ttl`` count and remove exactly what ``cache_get_many`` with that ``ttl`` does not
return; without ``ttl``, all three go by the expiry each entry was written with."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from helpers_cache import cache_entry
from qualspec.store import CacheEntry, Store

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def entry(key: str, kind: str, age: timedelta, lifetime: timedelta | None) -> CacheEntry:
    return cache_entry(key, kind, T0 - age, lifetime)


ENTRIES = [
    entry("c-short", "candidate", timedelta(hours=2), timedelta(seconds=60)),
    entry("c-long", "candidate", timedelta(minutes=30), None),
    entry("r-old", "reference", timedelta(days=2), None),
    entry("r-new", "reference", timedelta(hours=1), timedelta(seconds=10)),
    entry("x-gone", "calibration", timedelta(days=1), timedelta(hours=1)),
    entry("x-kept", "calibration", timedelta(days=1), None),
    # exactly as old as its lifetime: a read says expired, so do stats and clear
    entry("r-edge", "reference", timedelta(hours=24), None),
]
KEYS = [e.key for e in ENTRIES]


@pytest.mark.parametrize(
    "ttl",
    [
        None,
        {"candidate": None, "judge": None, "reference": 86400.0},
        {"candidate": 3600.0, "reference": None},
        {"reference": 1800.0, "calibration": None},
        {"candidate": 1e300},  # longer than the calendar: never
    ],
)
def test_stats_and_clear_count_what_a_read_with_the_same_ttl_skips(
    store: Store, ttl: dict[str, float | None] | None
) -> None:
    store.cache_put_many(ENTRIES)
    fresh = set(store.cache_get_many(KEYS, now=T0, ttl=ttl))
    expired = set(KEYS) - fresh
    stats = _cache_stats(store, ttl)
    assert stats["expired"] == len(expired)
    for kind, counted in stats["kinds"].items():
        assert counted["expired"] == sum(1 for e in ENTRIES if e.kind == kind and e.key in expired)
    assert _cache_clear(store, ttl) == len(expired)
    assert _cache_stats(store, ttl)["expired"] == 0
    assert _cache_stats(store, ttl)["entries"] == len(fresh)
    assert set(store.cache_get_many(KEYS, now=T0, ttl=ttl)) == fresh  # the rest untouched


def _cache_stats(store: Store, ttl: dict[str, float | None] | None) -> dict[str, Any]:
    from qualspec.store import _cache

    return _cache.cache_stats(store._db, now=T0, ttl=ttl)


def _cache_clear(store: Store, ttl: dict[str, float | None] | None) -> int:
    from qualspec.store import _cache

    return _cache.cache_clear(store._db, expired_only=True, now=T0, ttl=ttl)
