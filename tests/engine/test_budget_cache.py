"""--max-cost stops a run cleanly and resumably; the cache serves identical reruns.

The CLI runs in a subprocess against an in-process fake server, whose call counter is
the ground truth for "how many calls were made". On the fake server the prompt
``question NNN`` is 3 tokens and the answer ``Answer to: question NNN`` 5 tokens, so the
price file below makes every candidate call cost exactly $0.01.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers_integration import (
    cli_env,
    describe,
    open_store,
    run_cli,
    run_ids,
    write_suite,
)

from qualspec.testing import FakeServer

CALL_COST = 0.01
PRICES = {
    "fake/model-a": {"input": 0.0, "output": CALL_COST / 5 * 1_000_000},
    "fake/judge": {"input": 1.0, "output": 2.0},
}


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as srv:
        yield srv


@pytest.fixture
def prices(tmp_path: Path) -> Path:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(PRICES), encoding="utf-8")
    return path


def test_max_cost_stops_cleanly_and_resume_finishes(
    server: FakeServer, prices: Path, tmp_path: Path
) -> None:
    n, budget, concurrency = 20, 0.05, 1
    suite = write_suite(tmp_path / "suite.yaml", server.base_url, n_inputs=n, name="budget")
    home = tmp_path / "home"
    env = cli_env(home)
    args = ["run", str(suite), "--no-judge", "--quiet", "--prices", str(prices)]

    stopped = run_cli(
        [*args, "--max-cost", str(budget), "--max-concurrency", str(concurrency)],
        cwd=tmp_path,
        env=env,
    )
    assert stopped.returncode == 0, describe(stopped)
    assert "Stopped at the budget of $0.05" in stopped.stdout
    (run_id,) = run_ids(home)
    assert f"--resume {run_id}" in stopped.stdout
    with open_store(home) as store:
        record = store.load_run(run_id)
    assert record.summary.status == "budget_exceeded"
    assert all(r.cost_usd == pytest.approx(CALL_COST) for r in record.responses)
    assert record.summary.cost_usd >= budget - 1e-9
    made = server.calls
    assert made <= round(budget / CALL_COST) + concurrency, (
        f"{made} calls made for a budget of {round(budget / CALL_COST)} calls"
    )
    assert len(record.responses) == made  # every call made is recorded, none as an error
    assert all(r.error is None for r in record.responses)

    resumed = run_cli(
        [*args, "--resume", run_id, "--max-cost", "1", "--max-concurrency", str(concurrency)],
        cwd=tmp_path,
        env=env,
    )
    assert resumed.returncode == 0, describe(resumed)
    assert "Stopped at the budget" not in resumed.stdout
    assert server.calls == n  # the resume called only what was missing
    with open_store(home) as store:
        record = store.load_run(run_id)
    assert run_ids(home) == [run_id]
    assert record.summary.status == "finished"
    assert len({r.key for r in record.responses}) == len(record.responses) == n
    assert all(r.error is None for r in record.responses)
    assert record.summary.cost_usd == pytest.approx(n * CALL_COST)


def _calls_line(stdout: str) -> str:
    (line,) = [x for x in stdout.splitlines() if x.startswith("Calls:")]
    return line


def test_cache_serves_identical_reruns_and_can_be_bypassed_and_cleared(
    server: FakeServer, prices: Path, tmp_path: Path
) -> None:
    suite = write_suite(tmp_path / "suite.yaml", server.base_url, n_inputs=3, name="cache")
    home = tmp_path / "home"
    env = cli_env(home)
    args = ["run", str(suite), "--quiet", "--prices", str(prices), "--no-calibration"]
    per_run = 6  # 3 answers + 3 judgments

    def run(*extra: str) -> str:
        result = run_cli([*args, *extra], cwd=tmp_path, env=env)
        assert result.returncode == 0, describe(result)
        return result.stdout

    # dry run: estimates and a cost line, and nothing called or recorded
    dry = run("--dry-run")
    assert re.search(r"Estimated tokens:\*{0,2} \d+ in / \d+ out", dry), dry
    assert re.search(r"Estimated cost:\*{0,2} \$\d+\.\d{4}", dry), dry
    assert "Candidate calls: 3" in dry and "Judge calls: 3" in dry
    assert server.calls == 0
    assert not (home / "qualspec.db").exists() or run_ids(home) == []

    first = run()
    assert server.calls == per_run
    assert "3 candidate, 3 judge made; nothing from cache" in _calls_line(first)

    second = run()  # a new run, not a resume
    assert server.calls == per_run, "an identical rerun called the server"
    assert "0 candidate, 0 judge made; 3 answers and 3 judgments from cache" in _calls_line(second)
    first_id, second_id = run_ids(home)
    with open_store(home) as store:
        one, two = store.load_run(first_id), store.load_run(second_id)
    assert two.summary.status == "finished"
    assert not any(r.cached for r in one.responses)
    assert len(two.responses) == 3 and all(r.cached for r in two.responses)
    assert len(two.judgments) == 3 and all(j.cached for j in two.judgments)
    assert {(r.key, r.text) for r in two.responses} == {(r.key, r.text) for r in one.responses}
    assert [j.score for j in two.judgments] == [j.score for j in one.judgments]
    assert two.summary.cost_usd == 0.0 < one.summary.cost_usd

    run("--no-cache")
    assert server.calls == 2 * per_run
    run("--refresh")
    assert server.calls == 3 * per_run
    with open_store(home) as store:
        *_, refreshed_id = run_ids(home)
        refreshed = store.load_run(refreshed_id)
    assert not any(r.cached for r in refreshed.responses)
    assert not any(j.cached for j in refreshed.judgments)

    stats = run_cli(["cache", "stats", "--json"], cwd=tmp_path, env=env)
    assert stats.returncode == 0, describe(stats)
    data = json.loads(stats.stdout)
    # besides the calls: each finished run's analysis, kept once (and any embeddings)
    kept = data["kinds"]["analysis"]["entries"]
    kept += data["kinds"].get("embedding", {}).get("entries", 0)
    assert data["kinds"]["analysis"]["entries"] == 4
    assert data["entries"] == per_run + kept
    assert data["kinds"]["candidate"]["entries"] == 3
    assert data["kinds"]["judge"]["entries"] == 3

    cleared = run_cli(["cache", "clear"], cwd=tmp_path, env=env)
    assert cleared.returncode == 0, describe(cleared)
    assert f"Removed {per_run + kept} cache entries" in cleared.stdout
    empty = json.loads(run_cli(["cache", "stats", "--json"], cwd=tmp_path, env=env).stdout)
    assert empty["entries"] == 0

    run()  # nothing cached any more: called again
    assert server.calls == 4 * per_run
