"""Issue 20, "what must hold": a SIGKILL half way through a large run (more work items
than the run loads whole, ``--summarise-above``: the streamed path, its results file written
from the store) and a ``--resume`` make at most planned + ``--max-concurrency`` calls, with
one response per cell.

The fake server (its own process) answers the first half of the calls, then lets every
later call hang: the run stops at a known point, whatever the machine's speed, and the
kill comes once the store holds every answered call (nothing depends on timing).
"""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
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
    wait_for,
    write_suite,
)

CELLS = 240
SUMMARISE_ABOVE = 200  # fewer work items than CELLS: the streamed path (its default is 5,000)
HALF = CELLS // 2
CONCURRENCY = 10


@pytest.fixture
def server() -> Iterator[ServerProcess]:
    with fake_server_process(latency=0.0) as srv:
        yield srv


@pytest.mark.timeout(1800)  # two runs of 120 calls each, in processes of their own
def test_a_kill_at_half_of_a_large_run_then_resume_costs_at_most_the_calls_in_flight(
    server: ServerProcess, tmp_path: Path
) -> None:
    suite = write_suite(tmp_path / "suite.yaml", server.base_url, n_inputs=CELLS, name="big")
    home = tmp_path / "home"
    args = [
        *("run", str(suite), "--no-judge", "--quiet", "--max-concurrency", str(CONCURRENCY)),
        *("--summarise-above", str(SUMMARISE_ABOVE)),
    ]
    server.control(reset=True, hang_after=HALF)
    with background_cli(args, cwd=tmp_path, env=cli_env(home)) as proc:
        # every answered call is recorded and the next calls hang at the server: then the
        # kill (waiting for both, not for a time, so that it meets calls in flight)
        done = wait_for(
            lambda: (
                (recorded_responses(home) >= HALF and server.calls() > HALF)
                or proc.poll() is not None
            ),
            timeout=600,
            interval=0.05,
        )
        assert done and proc.poll() is None, "the run ended before the kill"
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL
    assert recorded_responses(home) == HALF
    hung = server.calls() - HALF
    assert 0 < hung <= CONCURRENCY, hung  # at most the calls in flight are lost

    server.control(hang_after=None)
    out = tmp_path / "results.json"
    resumed = run_cli(
        [*args, "--resume", "--output", str(out)], cwd=tmp_path, env=cli_env(home), timeout=1200
    )
    assert resumed.returncode == 0, describe(resumed)
    assert f"Large run: {CELLS} answers (0 errors" in resumed.stdout
    (run_id,) = run_ids(home)
    total = server.calls()
    assert total - HALF - hung == CELLS - HALF  # the resume called only what was missing
    assert total <= CELLS + CONCURRENCY, total
    with open_store(home) as store:
        summary = store.get_run(run_id)
        counts = store.run_counts(run_id)
        keys = [r.key for page in store.response_pages(run_id) for r in page]
    assert summary.status == "finished"
    assert counts["responses"] == CELLS and counts["errors"] == 0
    assert len(keys) == len(set(keys)) == CELLS  # one response per cell
    data = json.loads(out.read_text(encoding="utf-8"))  # the streamed results file
    assert data["summary"]["large_run"] is True
    answered = [r["input_id"] for r in data["responses"]]
    assert len(answered) == len(set(answered)) == CELLS


@pytest.mark.timeout(1800)
def test_a_kill_in_a_cached_rerun_then_resume_records_each_cell_once(
    server: ServerProcess, tmp_path: Path
) -> None:
    """A rerun whose cached answers the store copies itself (a SQLite file), killed once
    they are recorded while the new rows' calls hang, then resumed: each cell recorded
    once, the cached ones never asked for."""
    home, new = tmp_path / "home", 20
    first = write_suite(tmp_path / "suite.yaml", server.base_url, n_inputs=CELLS, name="big")
    args = ["--no-judge", "--quiet", "--max-concurrency", str(CONCURRENCY)]
    done = run_cli(["run", str(first), *args], cwd=tmp_path, env=cli_env(home), timeout=1200)
    assert done.returncode == 0, describe(done)
    suite = write_suite(tmp_path / "suite.yaml", server.base_url, n_inputs=CELLS + new, name="big")
    server.control(reset=True, hang_after=0)  # the new rows' calls hang: the run stops there
    with background_cli(["run", str(suite), *args], cwd=tmp_path, env=cli_env(home)) as proc:
        copied = wait_for(
            lambda: recorded_responses(home) >= 2 * CELLS or proc.poll() is not None,
            timeout=600,
            interval=0.05,
        )
        assert copied and proc.poll() is None, "the run ended before the kill"
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=120)
    assert recorded_responses(home) == 2 * CELLS  # every cached cell, no new one
    hung = server.calls()
    assert hung <= CONCURRENCY
    server.control(hang_after=None)
    resumed = run_cli(
        ["run", str(suite), *args, "--resume"], cwd=tmp_path, env=cli_env(home), timeout=1200
    )
    assert resumed.returncode == 0, describe(resumed)
    _, run_id = run_ids(home)
    with open_store(home) as store:
        counts = store.run_counts(run_id)
        keys = [r.key for page in store.response_pages(run_id) for r in page]
        cached = sum(r.cached for page in store.response_pages(run_id) for r in page)
        assert store.get_run(run_id).status == "finished"
    assert counts["responses"] == CELLS + new and counts["errors"] == 0
    assert len(keys) == len(set(keys)) == CELLS + new  # one response per cell
    assert cached == CELLS
    assert server.calls() - hung == new  # the resume asked only the new rows
