"""Resume end to end: SIGKILL mid-run, Ctrl-C, the run lock, and a PostgreSQL run.

Everything runs as real processes: the CLI in a subprocess, the fake server in another
one (50 ms a call; 1 s while a run waits to be interrupted, so that it cannot finish
first), results read back from the CLI's database. Judging is off
(``--no-judge``) in the kill and Ctrl-C tests so that one cell is one call.
"""

from __future__ import annotations

import signal
import sqlite3
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from helpers_integration import (
    ServerProcess,
    background_cli,
    cli_env,
    describe,
    fake_server_process,
    open_store,
    recorded_responses,
    run_cli,
    run_ids,
    store_conftest,
    wait_for,
    write_suite,
)

from qualspec.store import RunRecord, Store
from qualspec.testing import FakeServer

N_CALLS = 200
CONCURRENCY = 10


@pytest.fixture
def server() -> Iterator[ServerProcess]:
    with fake_server_process(latency=0.05) as srv:
        yield srv


def _load(home: Path, run_id: str) -> RunRecord:
    with open_store(home) as store:
        return store.load_run(run_id)


def _key_texts(record: RunRecord) -> set[tuple[str, str | None]]:
    return {(r.key, r.text) for r in record.responses}


def _assert_complete(record: RunRecord, n: int) -> None:
    keys = [r.key for r in record.responses]
    assert len(keys) == n, f"{len(keys)} responses, expected {n}"
    assert len(set(keys)) == n, "duplicate response keys"
    errors = [(r.key, r.error) for r in record.responses if r.error is not None]
    assert not errors, errors
    assert all(r.text for r in record.responses)


def _interrupt_half_way(
    suite: Path,
    home: Path,
    cwd: Path,
    sig: signal.Signals,
    *,
    at: int = N_CALLS // 2,
    default_sigint: bool = True,
) -> tuple[int, str, float]:
    """Start a run, send ``sig`` once the store holds ``at`` answers (default: half).

    Returns the exit code, stderr and how long the process took to exit after the signal.
    """
    args = ["run", str(suite), "--no-judge", "--quiet", "--max-concurrency", str(CONCURRENCY)]
    with background_cli(args, cwd=cwd, env=cli_env(home), default_sigint=default_sigint) as proc:
        reached = wait_for(
            lambda: recorded_responses(home) >= at or proc.poll() is not None,
            timeout=120,
            interval=0.01,
        )
        assert reached and proc.poll() is None, "the run ended before it could be interrupted"
        sent = time.monotonic()
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=120)
        took = time.monotonic() - sent
    return proc.returncode, err, took


def test_sigkill_half_way_then_resume_loses_and_duplicates_nothing(
    server: ServerProcess, tmp_path: Path
) -> None:
    server.control(latency=1.0)  # 20 s at least: the kill comes long before the end
    suite = write_suite(tmp_path / "suite.yaml", server.base_url, n_inputs=N_CALLS, name="kill")
    home = tmp_path / "home"
    start = server.calls()

    rc, err, _took = _interrupt_half_way(suite, home, tmp_path, signal.SIGKILL, at=3 * CONCURRENCY)
    assert rc == -signal.SIGKILL, err
    server.control(latency=0.05)
    (run_id,) = run_ids(home)
    killed = _load(home, run_id)
    # nobody could mark it (it was SIGKILLed): with its process gone, it reads failed
    assert killed.summary.status == "failed"
    assert killed.summary.failure is not None and "--resume" in killed.summary.failure
    listed = run_cli(["runs", "list"], cwd=tmp_path, env=cli_env(home))
    assert listed.returncode == 0, describe(listed)
    (row,) = [line for line in listed.stdout.splitlines() if run_id in line]
    assert "failed" in row and "running" not in row
    shown = run_cli(["runs", "show", run_id], cwd=tmp_path, env=cli_env(home))
    assert shown.returncode == 0, describe(shown)
    assert "(failed)" in shown.stdout and "Failed:" in shown.stdout and "is gone" in shown.stdout
    kept = {r.key for r in killed.responses if r.error is None}
    assert 0 < len(kept) < N_CALLS, len(kept)

    before_resume = server.calls()
    args = ["run", str(suite), "--no-judge", "--quiet", "--max-concurrency", str(CONCURRENCY)]
    # --resume with no id: the latest unfinished run of the suite (the killed one)
    resumed = run_cli([*args, "--resume"], cwd=tmp_path, env=cli_env(home))
    assert resumed.returncode == 0, describe(resumed)
    assert run_ids(home) == [run_id], "resume created a new run"
    # only what the store did not hold was called
    assert server.calls() - before_resume == N_CALLS - len(kept)
    total = server.calls() - start
    assert total <= N_CALLS + CONCURRENCY, (
        f"{total} calls for {N_CALLS} answers: the kill lost {total - N_CALLS} answers (in "
        f"flight or not yet committed); at most the {CONCURRENCY} in flight may be lost"
    )

    record = _load(home, run_id)
    assert record.summary.status == "finished"
    assert record.summary.owner_pid is None
    _assert_complete(record, N_CALLS)
    # what was recorded before the kill is kept as it was
    before_kill = {(r.key, r.text) for r in killed.responses if r.error is None}
    assert before_kill <= _key_texts(record)

    # the same suite uninterrupted, on a fresh database, gives the same results
    ref_home = tmp_path / "ref-home"
    reference = run_cli(args, cwd=tmp_path, env=cli_env(ref_home))
    assert reference.returncode == 0, describe(reference)
    (ref_id,) = run_ids(ref_home)
    ref = _load(ref_home, ref_id)
    _assert_complete(ref, N_CALLS)
    assert _key_texts(record) == _key_texts(ref)

    # a second resume of the finished run (by id: it is no longer "unfinished") calls nothing
    before_again = server.calls()
    again = run_cli([*args, "--resume", run_id], cwd=tmp_path, env=cli_env(home))
    assert again.returncode == 0, describe(again)
    assert server.calls() == before_again
    assert "Calls: 0 candidate, 0 judge" in again.stdout
    after = _load(home, run_id)
    assert after.summary.status == "finished"
    assert _key_texts(after) == _key_texts(record)


def test_calls_never_run_ahead_of_the_store_by_more_than_the_concurrency(
    server: ServerProcess, tmp_path: Path
) -> None:
    """While the database is busy (another process holds the SQLite write lock: a second
    run on the same file, ``cache clear``), the engine must not go on making calls whose
    answers exist only in memory: a SIGKILL at any moment may lose at most the calls in
    flight, which is what makes "total calls <= 200 + concurrency" hold whenever the kill
    comes (not only right after a commit).
    """
    suite = write_suite(tmp_path / "suite.yaml", server.base_url, n_inputs=N_CALLS, name="busy")
    home = tmp_path / "home"
    start = server.calls()
    args = ["run", str(suite), "--no-judge", "--quiet", "--max-concurrency", str(CONCURRENCY)]
    with background_cli(args, cwd=tmp_path, env=cli_env(home)) as proc:
        assert wait_for(
            lambda: recorded_responses(home) >= 20 or proc.poll() is not None, timeout=30
        )
        assert proc.poll() is None
        blocker = sqlite3.connect(home / "qualspec.db", timeout=30, isolation_level=None)
        try:
            blocker.execute("BEGIN IMMEDIATE")  # the CLI's writer now waits for us
            held = int(blocker.execute("SELECT count(*) FROM responses").fetchone()[0])
            # give the engine a second to run ahead; it should stop at `concurrency` calls
            wait_for(
                lambda: server.calls() - start >= held + 3 * CONCURRENCY, timeout=1.0, interval=0.01
            )
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
            seen = server.calls() - start
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
    recorded = recorded_responses(home)
    assert recorded == held
    assert seen - recorded <= CONCURRENCY, (
        f"the server answered {seen} calls but only {recorded} were recorded when the run was "
        f"killed: {seen - recorded} answers lived only in memory (concurrency {CONCURRENCY})"
    )


def test_two_resumes_of_one_run_at_once_the_second_is_refused(
    server: ServerProcess, tmp_path: Path
) -> None:
    # 2 s a call, one at a time: the holder's 240 calls would take 8 minutes, far longer than
    # the two refused CLI runs below take on any machine (12 calls, 24 s, let a loaded
    # machine's holder finish first); it is released below by setting the latency to 0
    server.control(latency=2.0)
    suite = write_suite(tmp_path / "suite.yaml", server.base_url, n_inputs=240, name="lock")
    home = tmp_path / "home"
    env = cli_env(home)
    args = ["run", str(suite), "--no-judge", "--quiet", "--max-concurrency", "1"]
    before = server.calls()
    with background_cli(args, cwd=tmp_path, env=env) as first:
        # the lock is taken before the first call
        assert wait_for(lambda: server.calls() > before, timeout=30, interval=0.02)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
    (run_id,) = run_ids(home)

    with (
        open_store(home) as store,
        background_cli([*args, "--resume", run_id], cwd=tmp_path, env=env) as holder,
    ):

        def holder_has_lock() -> bool:
            return store.get_run(run_id).owner_pid == holder.pid or holder.poll() is not None

        assert wait_for(holder_has_lock, timeout=30, interval=0.02)
        assert holder.poll() is None, "the first resume ended before the second one started"

        for resume in (["--resume", run_id], ["--resume"]):
            second = run_cli([*args, *resume], cwd=tmp_path, env=env)
            assert second.returncode == 1, describe(second)  # not bad input: a busy run
            lines = second.stderr.strip().splitlines()
            assert len(lines) == 1, describe(second)
            assert "being executed" in lines[0]
            assert f"process {holder.pid}" in lines[0]
            assert run_id in lines[0]
        assert holder.poll() is None
        assert store.get_run(run_id).owner_pid == holder.pid

        server.control(latency=0.0)  # let the holder finish quickly
        out, err = holder.communicate(timeout=300)
        assert holder.returncode == 0, f"{out}\n{err}"
        record = store.load_run(run_id)
    assert run_ids(home) == [run_id]
    assert record.summary.status == "finished"
    _assert_complete(record, 240)


@contextmanager
def _sigint_ignored(ignored: bool) -> Iterator[None]:
    """SIGINT ignored in this process for the block (when ``ignored``), as a non-interactive
    shell starts a background job (``python -m pytest ... &``, CI runners, nohup scripts):
    children inherit the ignored disposition."""
    if not ignored:
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("tests_run_as", ["foreground", "background job"])
def test_ctrl_c_marks_the_run_interrupted_and_resume_completes_it(
    server: ServerProcess, tmp_path: Path, tests_run_as: str
) -> None:
    """Ctrl-C comes once the run has recorded some answers and is still far from done:
    with 1 s a call, 10 at a time, the 200 calls take 20 s at the very least, so however
    slow or loaded the machine, the signal cannot arrive after the run has finished (it
    would then exit 0). Nothing depends on how fast the process stops.

    As a "background job" the test process ignores SIGINT (as the tests do when started
    with ``&`` from a script); the CLI child must still get Ctrl-C's default disposition
    (``start_cli`` gives it), as it has when started from a terminal."""
    server.control(latency=1.0)
    suite = write_suite(tmp_path / "suite.yaml", server.base_url, n_inputs=N_CALLS, name="ctrlc")
    home = tmp_path / "home"
    start = server.calls()

    with _sigint_ignored(tests_run_as == "background job"):
        rc, err, _took = _interrupt_half_way(suite, home, tmp_path, signal.SIGINT, at=CONCURRENCY)
    assert rc == 130, err
    assert "interrupted" in err and "--resume" in err
    (run_id,) = run_ids(home)
    interrupted = _load(home, run_id)
    assert interrupted.summary.status == "interrupted"
    assert interrupted.summary.owner_pid is None  # the lock was released
    kept = {(r.key, r.text) for r in interrupted.responses if r.error is None}
    assert 0 < len(kept) < N_CALLS
    # interrupted calls are not recorded as errors (which would count as results)
    assert all(r.error is None for r in interrupted.responses)

    server.control(latency=0.05)
    before_resume = server.calls()
    args = ["run", str(suite), "--no-judge", "--quiet", "--max-concurrency", str(CONCURRENCY)]
    resumed = run_cli([*args, "--resume"], cwd=tmp_path, env=cli_env(home))
    assert resumed.returncode == 0, describe(resumed)
    assert server.calls() - before_resume == N_CALLS - len(kept)
    assert server.calls() - start <= N_CALLS + CONCURRENCY
    record = _load(home, run_id)
    assert record.summary.status == "finished"
    _assert_complete(record, N_CALLS)
    assert kept <= _key_texts(record)


def test_sigterm_to_a_background_job_marks_the_run_interrupted(
    server: ServerProcess, tmp_path: Path
) -> None:
    """A run started as a background job of a script ignores SIGINT (the shell's doing, so
    that Ctrl-C at the terminal leaves it running; qualspec keeps it ignored, as Python
    does): ``kill PID`` (SIGTERM, also what CI timeouts and schedulers send) stops it as
    Ctrl-C does, marked interrupted, exit 130, resumable. Timing as in the Ctrl-C test."""
    server.control(latency=1.0)
    suite = write_suite(tmp_path / "suite.yaml", server.base_url, n_inputs=N_CALLS, name="term")
    home = tmp_path / "home"

    with _sigint_ignored(True):  # the CLI inherits the background job's ignored SIGINT
        rc, err, _took = _interrupt_half_way(
            suite, home, tmp_path, signal.SIGTERM, at=CONCURRENCY, default_sigint=False
        )
    assert rc == 130, err
    assert "interrupted" in err and "--resume" in err
    (run_id,) = run_ids(home)
    interrupted = _load(home, run_id)
    assert interrupted.summary.status == "interrupted"
    assert interrupted.summary.owner_pid is None
    kept = {(r.key, r.text) for r in interrupted.responses if r.error is None}
    assert 0 < len(kept) < N_CALLS
    assert all(r.error is None for r in interrupted.responses)

    server.control(latency=0.05)
    args = ["run", str(suite), "--no-judge", "--quiet", "--max-concurrency", str(CONCURRENCY)]
    resumed = run_cli([*args, "--resume"], cwd=tmp_path, env=cli_env(home))
    assert resumed.returncode == 0, describe(resumed)
    record = _load(home, run_id)
    assert record.summary.status == "finished"
    _assert_complete(record, N_CALLS)
    assert kept <= _key_texts(record)


# ---------------------------------------------------------------- PostgreSQL end to end


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh schema on the test server (skipped locally / failed in CI without one)."""
    from sqlalchemy import create_engine, text

    helpers = store_conftest()
    base = helpers.postgres_base_url()
    schema = f"qs_e2e_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE SCHEMA "{schema}"'))
        try:
            yield str(helpers._schema_url(base, schema))
        finally:
            with admin.connect() as conn:
                conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
    finally:
        admin.dispose()


@pytest.mark.postgres
def test_postgres_run_list_show_and_resume(postgres_url: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = cli_env(home)
    with FakeServer() as fake:
        suite = write_suite(tmp_path / "suite.yaml", fake.base_url, n_inputs=3, name="pg e2e")
        result = run_cli(
            ["run", str(suite), "--quiet", "--no-calibration", "--db", postgres_url],
            cwd=tmp_path,
            env=env,
        )
        assert result.returncode == 0, describe(result)
        assert fake.calls == 6  # 3 answers + 3 judgments
        assert "postgresql" in result.stdout
        assert "qualspec:qualspec@" not in result.stdout  # the password is masked

        with Store.open(postgres_url) as store:
            (summary,) = store.list_runs()
            record = store.load_run(summary.id)
        assert summary.status == "finished"
        _assert_complete(record, 3)
        assert len(record.judgments) == 3
        assert all(j.score == 8 for j in record.judgments)
        assert not (home / "qualspec.db").exists()  # nothing went to SQLite

        listed = run_cli(["runs", "list", "--db", postgres_url], cwd=tmp_path, env=env)
        assert listed.returncode == 0, describe(listed)
        assert summary.id in listed.stdout and "finished" in listed.stdout

        shown = run_cli(
            ["runs", "show", summary.id, "--show-responses", "--db", postgres_url],
            cwd=tmp_path,
            env=env,
        )
        assert shown.returncode == 0, describe(shown)
        assert "Responses: 3" in shown.stdout
        assert "r000" in shown.stdout and "Answer to: question 000" in shown.stdout

        again = run_cli(
            ["run", str(suite), "--quiet", "--no-calibration", "--db", postgres_url]
            + ["--resume", summary.id],
            cwd=tmp_path,
            env=env,
        )
        assert again.returncode == 0, describe(again)
        assert fake.calls == 6
        assert not (home / "qualspec.db").exists()
