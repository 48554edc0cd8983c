"""Resume after an edit: only what the current plan asks for is counted.

A run resumed after its suite changed (fewer runs per temperature, a deleted criterion)
or with another ``--judge`` keeps its old rows in the store, marked superseded: reports,
the results file, ``runs show``, ``runs list``, exports and ``diff`` count only the
current ones (exports list the superseded rows only when asked, marked as such). A
suite is identified by its file (or content) and name, so two files that share a
``name:`` never resume each other's runs. Everything runs through the CLI against the
fake server.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers_integration import cli_env, describe, open_store, run_cli, run_ids, write_suite

from qualspec.store import RunRecord
from qualspec.testing import FakeServer

N = 3  # input rows (cells) per suite


def _judge_reply(body: dict[str, Any]) -> str:
    """Judge ``fake/judge`` scores 9, any other judge model 3."""
    score = 9 if body.get("model") == "judge" else 3
    return json.dumps({"score": score, "reasoning": f"scored {score}"})


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    with FakeServer(judge_reply=_judge_reply, log_requests=False) as server:
        yield server


def _run(tmp_path: Path, home: Path, *args: str) -> str:
    result = run_cli(
        ["run", *args, "--quiet", "--no-calibration"], cwd=tmp_path, env=cli_env(home), timeout=120
    )
    assert result.returncode == 0, describe(result)
    return result.stdout


def _cli(tmp_path: Path, home: Path, *args: str) -> str:
    result = run_cli(list(args), cwd=tmp_path, env=cli_env(home), timeout=120)
    assert result.returncode == 0, describe(result)
    return result.stdout


def _load(home: Path, run_id: str, *, include_superseded: bool = False) -> RunRecord:
    with open_store(home) as store:
        return store.load_run(run_id, include_superseded=include_superseded)


def _results(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _export_rows(tmp_path: Path, home: Path, run_id: str, *extra: str) -> list[dict[str, str]]:
    text = _cli(tmp_path, home, "runs", "export", run_id, "--format", "csv", *extra)
    return list(csv.DictReader(io.StringIO(text)))


def test_fewer_runs_per_temperature_then_resume_counts_one_response_per_cell(
    fake: FakeServer, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    suite = write_suite(tmp_path / "suite.yaml", fake.base_url, n_inputs=N, name="edit", runs=2)
    _run(tmp_path, home, str(suite))
    (run_id,) = run_ids(home)
    assert len(_load(home, run_id).responses) == 2 * N

    write_suite(suite, fake.base_url, n_inputs=N, name="edit", runs=1)
    out = tmp_path / "resumed.json"
    _run(tmp_path, home, str(suite), "--resume", run_id, "--output", str(out))
    assert run_ids(home) == [run_id]

    record = _load(home, run_id)
    assert len(record.responses) == N, [(r.input_id, r.run_index) for r in record.responses]
    assert {r.run_index for r in record.responses} == {0}
    assert len(record.judgments) == N
    assert record.summary.n_responses == N and record.summary.n_judgments == N
    everything = _load(home, run_id, include_superseded=True)
    assert len(everything.superseded_responses) == N
    assert all(r.superseded and r.run_index == 1 for r in everything.superseded_responses)
    assert len(everything.superseded_judgments) == N

    data = _results(out)
    assert data["summary"]["counts"]["responses"] == N
    assert data["summary"]["counts"]["judgments"] == N
    assert len(data["responses"]) == N
    assert "Responses: 3" in _cli(tmp_path, home, "runs", "show", run_id)
    listed = _cli(tmp_path, home, "runs", "list")
    (line,) = [x for x in listed.splitlines() if "finished" in x]
    assert f" {N} " in line and f" {2 * N} " not in line, listed

    rows = _export_rows(tmp_path, home, run_id)
    assert len(rows) == N and all(r["superseded"] == "false" for r in rows)
    rows = _export_rows(tmp_path, home, run_id, "--include-superseded")
    assert len(rows) == 2 * N
    stale = [r for r in rows if r["superseded"] == "true"]
    assert len(stale) == N and {r["run_index"] for r in stale} == {"1"}


def test_deleted_criterion_is_not_counted_after_resume(fake: FakeServer, tmp_path: Path) -> None:
    home = tmp_path / "home"
    suite = write_suite(
        tmp_path / "suite.yaml", fake.base_url, n_inputs=N, name="crit", criteria=["kept", "gone"]
    )
    _run(tmp_path, home, str(suite))
    (run_id,) = run_ids(home)
    assert len(_load(home, run_id).judgments) == 2 * N

    write_suite(suite, fake.base_url, n_inputs=N, name="crit", criteria=["kept"])
    calls = fake.calls
    out = tmp_path / "resumed.json"
    _run(tmp_path, home, str(suite), "--resume", run_id, "--output", str(out))
    assert fake.calls == calls  # nothing to do: the kept criterion is judged already

    record = _load(home, run_id)
    assert {j.criterion for j in record.judgments} == {"kept"}
    assert len(record.judgments) == N
    assert _results(out)["summary"]["counts"]["judgments"] == N
    everything = _load(home, run_id, include_superseded=True)
    assert {j.criterion for j in everything.superseded_judgments} == {"gone"}
    assert all(j.superseded for j in everything.superseded_judgments)

    exported = json.loads(_cli(tmp_path, home, "runs", "export", run_id, "--format", "json"))
    assert {j["criterion"] for r in exported["responses"] for j in r["judgments"]} == {"kept"}
    exported = json.loads(
        _cli(tmp_path, home, "runs", "export", run_id, "--format", "json", "--include-superseded")
    )
    marked = {
        (j["criterion"], j["superseded"]) for r in exported["responses"] for j in r["judgments"]
    }
    assert marked == {("kept", False), ("gone", True)}
    assert exported["summary"]["counts"]["judgments"] == N  # counts stay current-only


def test_resume_with_another_judge_counts_only_the_new_judge(
    fake: FakeServer, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    suite = write_suite(tmp_path / "suite.yaml", fake.base_url, n_inputs=N, name="judges")
    first = tmp_path / "first.json"
    _run(tmp_path, home, str(suite), "--output", str(first))
    (run_id,) = run_ids(home)
    assert _results(first)["summary"]["mean_score"] == 9

    out = tmp_path / "resumed.json"
    _run(
        tmp_path,
        home,
        str(suite),
        "--resume",
        run_id,
        "--judge",
        "fake/other",
        "--output",
        str(out),
    )
    record = _load(home, run_id)
    assert len(record.judgments) == N
    assert {(j.judge_model, j.score) for j in record.judgments} == {("fake/other", 3.0)}
    assert _results(out)["summary"]["mean_score"] == 3  # not a blend of 9 and 3
    everything = _load(home, run_id, include_superseded=True)
    assert {(j.judge_model, j.score, j.superseded) for j in everything.superseded_judgments} == {
        ("fake/judge", 9.0, True)
    }
    assert everything.superseded_responses == []

    # diff sees the current judgments only: every cell went from 9 to 3, also when the
    # run is read from an export that lists the superseded rows
    full = tmp_path / "full.json"
    _cli(tmp_path, home, "runs", "export", run_id, "--include-superseded", "--output", str(full))
    for b in (run_id, str(full)):
        diff = json.loads(_cli(tmp_path, home, "diff", str(first), b, "--format", "json"))
        scores = [(c["score_a"], c["score_b"]) for c in diff["changes"]]
        assert scores == [(9.0, 3.0)] * N, diff

    rows = _export_rows(tmp_path, home, run_id, "--include-superseded")
    assert (
        sorted((r["judge_model"], r["superseded"]) for r in rows)
        == [("fake/judge", "true")] * N + [("fake/other", "false")] * N
    )


def test_resume_of_a_run_of_another_suite_is_refused(fake: FakeServer, tmp_path: Path) -> None:
    home = tmp_path / "home"
    one = write_suite(tmp_path / "one.yaml", fake.base_url, n_inputs=1, name="one")
    two = write_suite(tmp_path / "two.yaml", fake.base_url, n_inputs=1, name="two")
    _run(tmp_path, home, str(one))
    (run_id,) = run_ids(home)
    calls = fake.calls
    result = run_cli(
        ["run", str(two), "--quiet", "--resume", run_id], cwd=tmp_path, env=cli_env(home)
    )
    assert result.returncode == 2, describe(result)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, describe(result)
    assert run_id in lines[0] and "'one'" in lines[0] and "another suite" in lines[0]
    assert fake.calls == calls
    assert run_ids(home) == [run_id]


def test_two_files_sharing_a_name_do_not_resume_each_other(
    fake: FakeServer, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    a = write_suite(tmp_path / "a.yaml", fake.base_url, n_inputs=1, name="shared")
    b = write_suite(tmp_path / "b.yaml", fake.base_url, n_inputs=2, name="shared")
    _run(tmp_path, home, str(a))
    _run(tmp_path, home, str(b))
    run_a, run_b = run_ids(home)
    with open_store(home) as store:  # both left unfinished
        store.finish_run(run_a, "interrupted")
        store.finish_run(run_b, "interrupted")

    _run(tmp_path, home, str(a), "--resume")  # the latest of the name is b's run
    with open_store(home) as store:
        assert store.get_run(run_a).status == "finished"
        assert store.get_run(run_b).status == "interrupted"
    _run(tmp_path, home, str(b), "--resume")
    with open_store(home) as store:
        assert store.get_run(run_b).status == "finished"
    assert run_ids(home) == [run_a, run_b]
    assert len(_load(home, run_a).responses) == 1
    assert len(_load(home, run_b).responses) == 2

    # a file with no unfinished run of its own finds none (not the other file's)
    c = write_suite(tmp_path / "c.yaml", fake.base_url, n_inputs=3, name="shared")
    with open_store(home) as store:
        store.finish_run(run_a, "interrupted")
    result = run_cli(["run", str(c), "--quiet", "--resume"], cwd=tmp_path, env=cli_env(home))
    assert result.returncode == 2, describe(result)
    assert "no unfinished run" in result.stderr
    with open_store(home) as store:
        assert store.get_run(run_a).status == "interrupted"
