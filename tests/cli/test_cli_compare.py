"""`qualspec compare` and `qualspec insights` on results files and stored runs: formats,
--fail-on-regression's exit code, one-line errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from qualspec.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "analysis"))

from helpers_fields import company_run, results_file  # noqa: E402

from helpers_cli import run_cli


def test_compare_results_files_in_three_formats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    v1, v2 = (
        results_file(tmp_path, company_run("v1", 60)),
        results_file(tmp_path, company_run("v2", 85)),
    )
    code, out, err = run_cli(capsys, "compare", v1, v2)
    assert code == 0, err
    assert out.startswith("qualspec compare v1 -> v2 (suite profiles; field accuracy 0-100)")
    industry = next(line for line in out.splitlines() if line.strip().startswith("industry"))
    assert "+25.0" in industry and "improved" in industry
    assert "Verdict: improved" in out
    code, out, _ = run_cli(capsys, "compare", v1, v2, "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["overall"]["verdict"] == "improved"
    assert {r["name"] for r in data["by_field"]} == {"name", "industry", "founded_year"}
    code, out, _ = run_cli(capsys, "compare", v1, v2, "--format", "markdown")
    assert code == 0 and out.startswith("## qualspec compare v1 -> v2")


def test_fail_on_regression_exits_1_only_on_a_significant_regression(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = results_file(tmp_path, company_run("base", 80))
    worse = results_file(tmp_path, company_run("worse", 50, founded=60))
    same = results_file(tmp_path, company_run("same", 80))
    code, out, _ = run_cli(capsys, "compare", base, worse, "--fail-on-regression")
    assert code == 1 and "Verdict: regressed" in out and "regression: yes" in out
    code, out, _ = run_cli(capsys, "compare", base, same, "--fail-on-regression")
    assert code == 0 and "Verdict: no detectable change" in out
    code, _, _ = run_cli(capsys, "compare", base, worse)  # reported, not enforced
    assert code == 0


def test_compare_and_insights_read_stored_runs_by_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = []
    with Store.open() as store:
        for run in (company_run("x", 40), company_run("y", 45)):
            run_id = store.create_run("profiles", "h", {})
            for r in run.responses:
                r.key = f"{run_id}|{r.key}"
            for j in run.judgments:
                j.response_key = f"{run_id}|{j.response_key}"
                j.judge_key = f"{run_id}|{j.judge_key}"
            store.record_responses(run_id, run.responses)
            store.record_judgments(run_id, run.judgments)
            ids.append(run_id)
    code, out, err = run_cli(capsys, "compare", ids[0], ids[1])
    assert code == 0, err
    assert f"qualspec compare {ids[0]} -> {ids[1]}" in out
    code, out, err = run_cli(capsys, "insights", ids[1])
    assert code == 0, err
    assert "fails in every answer" in out and "'industry'" in out
    code, out, _ = run_cli(capsys, "insights", ids[1], "--format", "json")
    kinds = [i["kind"] for i in json.loads(out)["insights"]]
    assert "failing_field" in kinds


def test_unknown_runs_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(capsys, "compare", "nope", "nada")
    assert code != 0 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    code, _, err = run_cli(capsys, "insights", str(tmp_path / "missing.json"))
    assert code != 0 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
