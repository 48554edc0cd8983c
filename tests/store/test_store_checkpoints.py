"""WAL checkpoints of a SQLite file from a thread of their own while a run records.

A checkpoint copies the log back into the database file and syncs both; done by the
commit that crosses ``WAL_CHECKPOINT_PAGES``, it holds that commit's answers (and their
concurrency slots) meanwhile. ``LiteStore.checkpointing`` copies it from another thread
instead, and the recorder writes inside it. Observable from outside: the database file
takes the committed pages while the log stays far below the commits' own threshold.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
import time
from pathlib import Path

from store_factories import response

from qualspec.engine import Recorder
from qualspec.store import Store
from qualspec.store._lite_db import WAL_CHECKPOINT_PAGES

_WAIT_S = 120.0  # generous: a loaded machine may run the thread late, never wrongly


def _committed(db: Path) -> int:
    """Bytes of the database as committed (its pages, those only in the log included)."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        size = conn.execute("PRAGMA page_size").fetchone()[0]
    return int(pages) * int(size)


def _copied_back(db: Path) -> bool:
    """Whether the file itself holds every committed page (waiting up to ``_WAIT_S``)."""
    want = _committed(db)
    deadline = time.monotonic() + _WAIT_S
    while time.monotonic() < deadline:
        if db.stat().st_size >= want:
            return True
        time.sleep(0.05)
    return False


def test_a_checkpointing_store_copies_the_log_back_while_it_stays_open(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    store = Store.open(f"sqlite:///{db}")
    try:
        run_id = store.create_run("suite", "hash", {})
        store.record_responses(run_id, [response(f"a{i}", text="x" * 500) for i in range(300)])
        log = Path(f"{db}-wal").stat().st_size
        # the commits alone checkpoint only past WAL_CHECKPOINT_PAGES: these stay in the log
        assert 0 < log < WAL_CHECKPOINT_PAGES * 4096
        time.sleep(0.3)
        assert db.stat().st_size < _committed(db), "copied back with no checkpointing"
        with store.checkpointing():  # type: ignore[attr-defined]
            assert any(t.name == "qualspec-checkpoint" for t in threading.enumerate())
            assert _copied_back(db), "the log was not copied back while the store was open"
            store.record_responses(run_id, [response(f"b{i}", text="y" * 500) for i in range(300)])
            assert _copied_back(db), "later commits were not copied back"
        assert not any(t.name == "qualspec-checkpoint" for t in threading.enumerate())
        assert store.run_counts(run_id)["responses"] == 600
    finally:
        store.close()


def test_the_recorder_writes_with_checkpoints_from_their_own_thread(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'r.db'}")
    run_id = store.create_run("suite", "hash", {})
    names: list[set[str]] = []

    async def record() -> None:
        async with Recorder(store, run_id) as recorder:
            done = asyncio.Event()
            recorder.response(response("k1"), on_commit=done.set)
            await done.wait()
            names.append({t.name for t in threading.enumerate()})
        names.append({t.name for t in threading.enumerate()})

    try:
        asyncio.run(record())
        assert "qualspec-checkpoint" in names[0]
        assert "qualspec-checkpoint" not in names[1]  # stopped with the recorder
        assert store.run_counts(run_id)["responses"] == 1
    finally:
        store.close()


def test_a_store_without_checkpointing_records_as_before(tmp_path: Path) -> None:
    """PostgreSQL's store and SQLite on SQLAlchemy have no ``checkpointing``: the
    recorder writes without it."""

    class Plain:
        def __init__(self, inner: Store) -> None:
            self._inner = inner

        def __getattr__(self, name: str) -> object:
            if name == "checkpointing":
                raise AttributeError(name)
            return getattr(self._inner, name)

    store = Store.open(f"sqlite:///{tmp_path / 'p.db'}")
    run_id = store.create_run("suite", "hash", {})

    async def record() -> None:
        async with Recorder(Plain(store), run_id) as recorder:  # type: ignore[arg-type]
            recorder.response(response("k1"))

    try:
        asyncio.run(record())
        assert store.run_counts(run_id)["responses"] == 1
    finally:
        store.close()
