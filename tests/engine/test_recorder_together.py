"""The recorder writes a batch's answers and cache entries in one transaction
(``Store.together``: one commit, not one per kind), gathers what arrives while records
keep coming, and falls back to writing kind by kind when the joint write fails."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

from qualspec.engine import Recorder
from qualspec.errors import StoreError
from qualspec.store import CacheEntry, ResponseRecord, Store

DEADLINE_S = 30.0  # generous: only ever waited out when a test fails


def _response(i: int) -> ResponseRecord:
    return ResponseRecord(
        key=f"k{i:03d}",
        candidate="c",
        role=None,
        scenario="s",
        input_id=f"r{i:03d}",
        temperature=0.0,
        effective_temperature=0.0,
        run_index=0,
        provider="fake",
        model="m",
        text=f"answer {i}",
    )


def _entry(i: int) -> CacheEntry:
    return CacheEntry(key=f"c{i:03d}", kind="candidate", provider="fake", model="m", text="t")


class CountingStore(Store):
    """A SQLite store that counts its joint transactions (and can make them fail)."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.joint = 0
        self.fail_joint = False

    @contextlib.contextmanager
    def together(self) -> Iterator[None]:
        with super().together():
            self.joint += 1
            yield
            if self.fail_joint:
                raise StoreError("database error on sqlite:///x.db: disk I/O error")


def _record(store: CountingStore, count: int) -> list[str]:
    """``count`` answers and their cache entries through a recorder, all queued at once
    (a busy run); the keys whose commit callbacks ran."""
    run_id = store.create_run("suite", "h", {})
    done: list[str] = []

    async def main() -> None:
        async with Recorder(store, run_id) as recorder:
            for i in range(count):
                key = f"k{i:03d}"
                recorder.response(_response(i), on_commit=lambda key=key: done.append(key))
                recorder.cache(_entry(i))
            deadline = time.monotonic() + DEADLINE_S
            while len(done) < count:
                assert time.monotonic() < deadline, "timed out waiting for the commits"
                await asyncio.sleep(0.005)

    asyncio.run(main())
    assert sorted(store.response_keys(run_id)) == [f"k{i:03d}" for i in range(count)]
    assert len(store.cache_get_many([f"c{i:03d}" for i in range(count)])) == count
    return done


def test_a_batch_of_answers_and_cache_entries_is_one_transaction(tmp_path: Path) -> None:
    store = CountingStore(f"sqlite:///{tmp_path / 'q.db'}")
    try:
        done = _record(store, 200)
    finally:
        store.close()
    assert sorted(done) == [f"k{i:03d}" for i in range(200)]
    # queued at once, 400 records make a few batches (at most 500 rows each), each
    # written in one transaction; never one per record
    assert 1 <= store.joint <= 10


def test_a_joint_write_that_fails_is_written_again_kind_by_kind(tmp_path: Path) -> None:
    store = CountingStore(f"sqlite:///{tmp_path / 'q.db'}")
    store.fail_joint = True
    try:
        done = _record(store, 50)
    finally:
        store.close()
    assert store.joint >= 1
    assert sorted(done) == [f"k{i:03d}" for i in range(50)]
