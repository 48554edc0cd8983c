"""The call cache: TTL, no errors, stats, clearing, chunked reads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from qualspec.store import CacheEntry, Store

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def entry(key: str, kind: str = "candidate", **overrides: object) -> CacheEntry:
    values: dict[str, object] = {
        "key": key,
        "kind": kind,
        "provider": "openai",
        "model": "gpt-test",
        "text": f"cached {key}",
        "finish_reason": "stop",
        "input_tokens": 10,
        "output_tokens": 5,
        "effective_temperature": 0.5,
        "structured": None,
        "created_at": T0,
        "expires_at": None,
    }
    values.update(overrides)
    return CacheEntry(**values)  # type: ignore[arg-type]


def test_round_trip_and_ttl_expiry(store: Store) -> None:
    store.cache_put_many(
        [
            entry("forever"),
            entry("day", kind="reference", expires_at=T0 + timedelta(hours=24)),
            entry("judge", kind="judge", text=None, structured={"score": 7, "why": ["ok"]}),
        ]
    )
    got = store.cache_get_many(["forever", "day", "judge", "missing"], now=T0 + timedelta(hours=1))
    assert set(got) == {"forever", "day", "judge"}
    assert got["forever"] == entry("forever")
    assert got["judge"].structured == {"score": 7, "why": ["ok"]}
    assert got["day"].expires_at == T0 + timedelta(hours=24)
    later = store.cache_get_many(["forever", "day"], now=T0 + timedelta(hours=25))
    assert set(later) == {"forever"}


def test_errors_are_never_cached(store: Store) -> None:
    store.cache_put_many(
        [
            entry("failed", error="HTTP 500"),
            entry("empty", text=None, structured=None),
            entry("good"),
        ]
    )
    assert set(store.cache_get_many(["failed", "empty", "good"])) == {"good"}
    assert store.cache_stats()["entries"] == 1


def test_put_replaces_existing_entry(store: Store) -> None:
    store.cache_put_many([entry("k", text="old")])
    store.cache_put_many([entry("k", text="new"), entry("k", text="newest")])
    assert store.cache_get_many(["k"])["k"].text == "newest"


def test_many_keys_are_read_in_chunks(store: Store) -> None:
    store.cache_put_many([entry(f"k{i}") for i in range(1200)])
    keys = [f"k{i}" for i in range(1300)]
    got = store.cache_get_many(iter(keys))
    assert len(got) == 1200
    assert got["k1199"].text == "cached k1199"


def test_stats_and_clear(store: Store) -> None:
    now = datetime.now(UTC)
    store.cache_put_many(
        [
            entry("a", created_at=now - timedelta(days=2)),
            entry("b", text="é" * 10, created_at=now - timedelta(days=1)),
            entry("r1", kind="reference", expires_at=now - timedelta(seconds=1)),
            entry("r2", kind="reference", expires_at=now + timedelta(hours=1), created_at=now),
        ]
    )
    stats = store.cache_stats()
    assert stats["entries"] == 4 and stats["expired"] == 1
    assert stats["kinds"]["candidate"]["entries"] == 2
    assert stats["kinds"]["candidate"]["bytes"] == len("cached a") + 20  # utf-8 bytes
    assert stats["kinds"]["candidate"]["oldest"] == now - timedelta(days=2)
    assert stats["newest"] == now
    assert store.cache_clear(expired_only=True) == 1
    assert store.cache_clear(kind="reference") == 1
    assert set(store.cache_stats()["kinds"]) == {"candidate"}
    assert store.cache_clear() == 2
    empty = store.cache_stats()
    assert empty["entries"] == 0 and empty["oldest"] is None and empty["kinds"] == {}
