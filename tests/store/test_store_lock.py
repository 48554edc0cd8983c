"""The run lock: one live process per run; dead or silent owners are taken over."""

from __future__ import annotations

import multiprocessing
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import create_engine, update
from store_factories import try_acquire

from qualspec.errors import RunLockedError
from qualspec.store import Store
from qualspec.store._schema import runs


def _set_owner(url: str, run_id: str, pid: int, host: str, beat: datetime) -> None:
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(
            update(runs)
            .where(runs.c.id == run_id)
            .values(owner_pid=pid, owner_host=host, heartbeat_at=beat)
        )
    engine.dispose()


@pytest.fixture
def live_pid() -> Iterator[int]:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield proc.pid
    proc.kill()
    proc.wait()


@pytest.fixture
def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_live_owner_on_this_host_is_refused(store: Store, db_url: str, live_pid: int) -> None:
    run_id = store.create_run("suite", "h", {})
    host = socket.gethostname()
    # a heartbeat long past does not matter on the same host: the pid is alive
    _set_owner(db_url, run_id, live_pid, host, datetime.now(UTC) - timedelta(hours=1))
    with pytest.raises(RunLockedError) as caught:
        store.acquire_run(run_id)
    assert str(caught.value) == (
        f"run {run_id} is being executed by process {live_pid} on {host}; wait for it or kill it"
    )
    assert store.get_run(run_id).owner_pid == live_pid


def test_dead_owner_is_taken_over(store: Store, db_url: str, dead_pid: int) -> None:
    run_id = store.create_run("suite", "h", {})
    _set_owner(db_url, run_id, dead_pid, socket.gethostname(), datetime.now(UTC))
    store.acquire_run(run_id)
    summary = store.get_run(run_id)
    assert (summary.owner_pid, summary.owner_host) == (os.getpid(), socket.gethostname())


def test_other_host_is_judged_by_its_heartbeat(store: Store, db_url: str) -> None:
    run_id = store.create_run("suite", "h", {})
    now = datetime.now(UTC)
    _set_owner(db_url, run_id, 4242, "other-host.example", now - timedelta(seconds=5))
    with pytest.raises(RunLockedError, match="process 4242 on other-host.example"):
        store.acquire_run(run_id)
    _set_owner(db_url, run_id, 4242, "other-host.example", now - timedelta(seconds=120))
    store.acquire_run(run_id)
    assert store.get_run(run_id).owner_host == socket.gethostname()


def test_a_running_run_whose_owner_is_gone_reads_failed_with_the_reason(
    store: Store, db_url: str, dead_pid: int, live_pid: int
) -> None:
    """A run left "running" by a process that could not mark it (SIGKILL, or the database
    down when it stopped) is failed to everyone who reads it, and resumable."""
    host = socket.gethostname()
    now = datetime.now(UTC)
    gone = store.create_run("suite", "h", {})
    _set_owner(db_url, gone, dead_pid, host, now)
    summary = store.get_run(gone)
    assert summary.status == "failed"
    assert summary.failure is not None and "\n" not in summary.failure
    assert f"pid {dead_pid} on {host}" in summary.failure and "--resume" in summary.failure
    assert [r.status for r in store.list_runs() if r.id == gone] == ["failed"]
    assert store.latest_unfinished_run("suite") == gone
    # a reason the run itself recorded is kept
    store.update_run_metadata(gone, {"failure": "could not record results: disk full"})
    assert store.get_run(gone).failure == "could not record results: disk full"

    live = store.create_run("suite", "h", {})
    _set_owner(db_url, live, live_pid, host, now - timedelta(hours=1))
    assert store.get_run(live).status == "running" and store.get_run(live).failure is None
    far = store.create_run("suite", "h", {})  # another host: its heartbeat decides
    _set_owner(db_url, far, 4242, "other-host.example", now - timedelta(seconds=5))
    assert store.get_run(far).status == "running"
    _set_owner(db_url, far, 4242, "other-host.example", now - timedelta(seconds=120))
    assert store.get_run(far).status == "failed"
    unowned = store.create_run("suite", "h", {})  # not yet taken by anyone: running
    assert store.get_run(unowned).status == "running"
    # taken over by a resume, it is running again
    store.acquire_run(gone)
    assert store.get_run(gone).status == "running"


def test_acquire_is_reentrant_heartbeat_and_release(store: Store) -> None:
    run_id = store.create_run("suite", "h", {})
    store.acquire_run(run_id)
    first = store.get_run(run_id).heartbeat_at
    store.acquire_run(run_id[:-2])  # the same process may take it again (by prefix too)
    store.heartbeat(run_id)
    beat = store.get_run(run_id).heartbeat_at
    assert first is not None and beat is not None and beat >= first
    store.release_run(run_id)
    released = store.get_run(run_id)
    assert (released.owner_pid, released.owner_host, released.heartbeat_at) == (None, None, None)


def test_two_processes_at_once_exactly_one_wins(store: Store, db_url: str) -> None:
    run_id = store.create_run("suite", "h", {})
    ctx = multiprocessing.get_context("spawn")
    barrier, results, done = ctx.Barrier(2), ctx.Queue(), ctx.Event()
    procs = [
        ctx.Process(target=try_acquire, args=(db_url, run_id, barrier, results, done))
        for _ in range(2)
    ]
    for proc in procs:
        proc.start()
    try:
        outcomes = sorted([results.get(timeout=60), results.get(timeout=60)])
        assert [kind for kind, _ in outcomes] == ["locked", "won"]
        winner = outcomes[1][1]
        assert f"executed by process {winner}" in str(outcomes[0][1])
        with pytest.raises(RunLockedError):
            store.acquire_run(run_id)  # the winner is alive and holds it
    finally:
        done.set()
        for proc in procs:
            proc.join(timeout=60)
    assert all(proc.exitcode == 0 for proc in procs)
    store.acquire_run(run_id)  # the winner has exited: its lock is stale
    assert store.get_run(run_id).owner_pid == os.getpid()
