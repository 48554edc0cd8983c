"""``cache_hits`` of a SQLite file's store (issue 20: the cached rerun copies its answers
inside the database): the keys ``cache_get_many`` finds, by the same freshness rules
(each kind's lifetime asked for now, else the entry's own expiry), with their tokens."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from qualspec.store import CacheEntry, Store

NOW = datetime(2026, 11, 28, 12, 0, 0, tzinfo=UTC)


def _entry(key: str, kind: str, age_s: float, expires_in_s: float | None) -> CacheEntry:
    return CacheEntry(
        key=key,
        kind=kind,
        provider="p",
        model="m",
        text=f"answer {key}",
        input_tokens=len(key),
        output_tokens=2 * len(key),
        created_at=NOW - timedelta(seconds=age_s),
        expires_at=None if expires_in_s is None else NOW + timedelta(seconds=expires_in_s),
    )


def test_the_hits_are_the_keys_cache_get_many_finds_with_their_tokens(tmp_path: Path) -> None:
    entries = [
        _entry("fresh", "candidate", 10, None),
        _entry("expired", "candidate", 10, -1),
        _entry("not-yet", "candidate", 10, 5),
        _entry("old-ref", "reference", 100, None),
        _entry("new-ref", "reference", 5, None),
        _entry("judge", "judge", 10**6, -10),
        _entry("edge", "reference", 50, None),
    ]
    store = Store.open(f"sqlite:///{tmp_path / 'q.db'}")
    try:
        store.cache_put_many(entries)
        keys = [e.key for e in entries] + ["absent"]
        for ttl in ({}, {"reference": 50.0}, {"judge": None, "candidate": 1e12}, {"reference": 0}):
            hits = store.cache_hits(keys, NOW, ttl)  # type: ignore[attr-defined]
            found = store.cache_get_many(keys, NOW, ttl)
            assert set(hits) == set(found), ttl
            assert hits == {k: (e.input_tokens, e.output_tokens) for k, e in found.items()}
        assert set(store.cache_hits(keys, NOW, {})) == {  # type: ignore[attr-defined]
            "fresh", "not-yet", "old-ref", "new-ref", "edge"
        }  # fmt: skip
    finally:
        store.close()


def test_a_copied_cell_is_the_answer_of_its_entry_and_a_vanished_entry_makes_none(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'q.db'}")
    try:
        run_id = store.create_run("s", "h", {})
        store.cache_put_many([_entry("ck1", "candidate", 1, None)])
        versions = {"scenario_prompt:s": 3}
        cells = [
            # key, candidate, role, scenario, input_id, temperature, run_index, provider,
            # model, kind, input_values, cache key, prompt versions, time
            ("k1", "c", "r", "s", "i1", 0.5, 2, "p", "m", "candidate", {"q": "x"}, "ck1",
             versions, NOW),
            ("k2", "c", None, "s", "i2", None, 0, "p", "m", "candidate", None, "gone",
             versions, NOW),
        ]  # fmt: skip
        with caplog.at_level(logging.WARNING, logger="qualspec.store"):
            written = store.copy_cached(run_id, cells)  # type: ignore[attr-defined]
        assert written == 1
        assert "1 cached answers were gone from the cache" in caplog.text
        (record,) = store.load_run(run_id).responses
        assert (record.key, record.role, record.input_id, record.temperature) == (
            "k1", "r", "i1", 0.5
        )  # fmt: skip
        assert (record.text, record.input_tokens, record.output_tokens) == ("answer ck1", 3, 6)
        assert record.cached and record.attempts == 0 and record.cost_usd == 0.0
        assert (record.latency_s, record.queue_s, record.error) == (0.0, None, None)
        assert record.call_key == "ck1" and record.prompt_versions == versions
        assert record.input_values == {"q": "x"} and record.created_at == NOW
    finally:
        store.close()
