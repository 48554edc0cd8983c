"""Issue 17, item 22 (follow-up): the field grader's calibration before a reference-graded
run, ``judge-check --grader`` and ``grader-check`` are runs named for what they are, not
calls in a "(session)" run; a calibration read from the store leaves no empty run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers_cli import run_cli, work_in
from helpers_grading import fields_reply, graded_suite, knowing_grade
from qualspec.judges import DEFAULT_FIELD_PAIRS
from qualspec.store import Store
from qualspec.testing import FakeServer

KEY_ENV = "FAKE_GRADER_RUNS_KEY"


def _reply(body: dict[str, Any]) -> str:
    """A reference model and a candidate that word the profile differently (so the grader
    decides), and a grader that knows the calibration pairs."""
    text = body["messages"][-1]["content"]
    if body["model"] == "ref":
        return json.dumps({"name": "Acme", "industry": "SaaS"})
    if body["model"] != "grader":
        return json.dumps({"name": "Acme Inc", "industry": "software as a service"})
    return fields_reply(text, lambda answer: knowing_grade(answer, 80))


@pytest.fixture(autouse=True)
def _work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work_in(tmp_path, monkeypatch, {KEY_ENV: "sk-grader-runs", "COLUMNS": "300"})


def test_grader_calibration_and_checks_are_named_runs_not_sessions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = f"sqlite:///{tmp_path / 'q.db'}"
    with FakeServer(judge_reply=_reply) as server:
        suite = graded_suite(tmp_path / "suite.yaml", server.base_url, KEY_ENV)
        code, out, err = run_cli(capsys, "run", str(suite), "--quiet", "--db", db, "-o", "a.json")
        assert code == 0, out + err
        run_id = json.loads((tmp_path / "a.json").read_text())["run"]["id"]
        # the second run reads the calibration from the store: no call, no empty run
        code, out, err = run_cli(capsys, "run", str(suite), "--quiet", "--db", db, "-o", "b.json")
        assert code == 0, out + err
        code, out, err = run_cli(capsys, "grader-check", run_id, "--repeats", "2", "--db", db)
        assert code == 0, out + err
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-grader-runs")
        code, out, err = run_cli(
            capsys, "judge-check", "--grader", "openai/grader", "--pairs", "3", "--db", db
        )
        assert code == 0, out + err
    code, listing, err = run_cli(capsys, "runs", "list", "--db", db)
    assert code == 0, err
    assert "(session)" not in listing
    assert listing.count("grader calibration fake/grader") == 1  # measured once
    assert f"grader-check {run_id}" in listing
    assert "judge-check --grader openai/grader" in listing
    with Store.open(db) as store:
        names = [r.suite_name for r in store.list_runs()]
        runs = {r.suite_name: r for r in store.list_runs()}
        calibration = store.load_run(runs["grader calibration fake/grader"].id)
        check = store.load_run(runs[f"grader-check {run_id}"].id)
        judged = store.load_run(runs["judge-check --grader openai/grader"].id)
    assert sorted(names) == sorted(
        [
            "graded",
            "graded",
            "grader calibration fake/grader",
            f"grader-check {run_id}",
            "judge-check --grader openai/grader",
        ]
    )
    meta = calibration.summary.metadata
    assert meta["kind"] == "grader_calibration" and meta["grader"] == "fake/grader"
    assert calibration.summary.status == "finished"
    assert len(calibration.responses) == 2 * DEFAULT_FIELD_PAIRS  # one call per value
    assert check.summary.metadata["kind"] == "grader_check"
    assert check.summary.metadata["run"] == run_id
    assert check.summary.metadata["grader_check"]["repeats"] == 2
    assert len(check.responses) == 2  # one graded answer, re-graded twice
    assert judged.summary.metadata["kind"] == "grader_judge_check"
    (summary,) = judged.summary.metadata["judge_calibration"].values()
    assert summary["n_pairs"] == 3 and summary["role"] == "grader"
    assert len(judged.responses) == 2 * 3
