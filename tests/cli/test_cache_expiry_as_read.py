"""Issue 17, item 11 (follow-up): ``cache stats`` (its "expired" column) and ``cache clear
--expired`` judge expiry as a run reads the cache: by each entry's age against the run's
lifetimes (the defaults, or ``--cache-ttl`` given to them as to the run), not by the
lifetime the entry was written with. What they call expired is exactly what a read
with the same lifetimes does not return."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from helpers_cache import cache_entry
from helpers_cli import run_cli
from qualspec.store import CacheEntry, Store

NOW = datetime.now(UTC)


def _entry(key: str, kind: str, age: timedelta, lifetime: timedelta | None) -> CacheEntry:
    return cache_entry(key, kind, NOW - age, lifetime)


ENTRIES = [
    # written by a run with --cache-ttl candidate=60: the default run reads it (never expires)
    _entry("cand-60s", "candidate", timedelta(hours=2), timedelta(seconds=60)),
    _entry("cand-forever", "candidate", timedelta(hours=2), None),
    _entry("judge-old", "judge", timedelta(days=30), None),
    # written with --cache-ttl reference=none two days ago: 24 h by default, expired
    _entry("ref-2d", "reference", timedelta(days=2), None),
    # written with reference=10 an hour ago: under 24 h old, read by a default run
    _entry("ref-1h", "reference", timedelta(hours=1), timedelta(seconds=10)),
    # a kind no --cache-ttl names keeps the expiry it was written with
    _entry("cal-gone", "calibration", timedelta(days=1), timedelta(hours=1)),
    _entry("cal-kept", "calibration", timedelta(days=1), None),
]
KEYS = [e.key for e in ENTRIES]


@pytest.fixture
def db(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'q.db'}"
    with Store.open(url) as store:
        store.cache_put_many(ENTRIES)
    return url


def _read(db: str, ttl: dict[str, float | None]) -> set[str]:
    with Store.open(db) as store:
        return set(store.cache_get_many(KEYS, ttl=ttl))


DEFAULT = {"candidate": None, "judge": None, "reference": 86400.0}


@pytest.mark.parametrize(
    ("flags", "ttl", "expired"),
    [
        ([], DEFAULT, {"ref-2d", "cal-gone"}),
        (
            ["--cache-ttl", "candidate=3600", "--cache-ttl", "reference=none"],
            {"candidate": 3600.0, "judge": None, "reference": None},
            {"cand-60s", "cand-forever", "cal-gone"},
        ),
        (
            ["--cache-ttl", "reference=1800"],
            {"candidate": None, "judge": None, "reference": 1800.0},
            {"ref-2d", "ref-1h", "cal-gone"},
        ),
    ],
)
def test_stats_and_clear_expired_agree_with_what_a_run_reads(
    db: str,
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
    ttl: dict[str, float | None],
    expired: set[str],
) -> None:
    assert _read(db, ttl) == set(KEYS) - expired  # what a run with these lifetimes reads
    code, out, err = run_cli(capsys, "cache", "stats", "--json", "--db", db, *flags)
    assert code == 0, err
    stats = json.loads(out)
    assert stats["entries"] == len(KEYS) and stats["expired"] == len(expired)
    assert stats["ttl"] == ttl
    for kind in ("candidate", "judge", "reference", "calibration"):
        wanted = sum(1 for e in ENTRIES if e.kind == kind and e.key in expired)
        assert stats["kinds"][kind]["expired"] == wanted, kind
    code, out, err = run_cli(capsys, "cache", "stats", "--db", db, *flags)
    assert code == 0, err
    assert "expired: what a run would not read now" in " ".join(out.split())

    code, out, err = run_cli(capsys, "cache", "clear", "--expired", "--db", db, *flags)
    assert code == 0, err
    assert f"Removed {len(expired)} expired cache entries" in out
    with Store.open(db) as store:
        forever = dict.fromkeys(("candidate", "judge", "reference", "calibration"))
        left = set(store.cache_get_many(KEYS, ttl=forever))  # every row left, of any age
        assert store.cache_stats(ttl=ttl)["expired"] == 0
    assert left == set(KEYS) - expired


def test_a_lifetime_without_expired_is_refused_not_read_as_clear_everything(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "cache", "clear", "--cache-ttl", "candidate=60", "--db", db)
    assert code == 2 and "add --expired" in err
    with Store.open(db) as store:
        assert store.cache_stats()["entries"] == len(KEYS)
