"""Issue 17, item 15 (seed 001): ``qualspec trend`` over more than two runs (results files
or a suite's last finished runs in the store): per run and per model the level with n and
95% interval, the change between consecutive runs, the prompt version that changed, JSON
with ``-o``, and ``--fail-on-regression``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from qualspec.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "analysis"))

from helpers_fields import company_run, results_file  # noqa: E402

from helpers_cli import run_cli


def test_trend_of_three_results_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = [
        results_file(tmp_path, company_run("v1", 60)),
        results_file(tmp_path, company_run("v2", 85)),
        results_file(tmp_path, company_run("v3", 50, founded=60)),
    ]
    out_path = tmp_path / "trend.json"
    code, out, err = run_cli(capsys, "trend", *files, "-o", str(out_path))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("Trend of 3 runs, oldest first (field accuracy 0-100")
    assert any(line.startswith("  1. v1") and "n=30  95% CI [" in line for line in lines)
    assert any(line.startswith("  1 -> 2: +") and "improved" in line for line in lines)
    assert any(line.startswith("  2 -> 3: -") and "regressed" in line for line in lines)
    assert "Model gpt:" in out and "Model llama:" in out
    data = json.loads(out_path.read_text(encoding="utf-8"))
    assert [r["run_id"] for r in data["runs"]] == ["v1", "v2", "v3"]
    assert data["has_regression"] is True and data["schema_version"] == "1.0"

    code, out, _ = run_cli(capsys, "trend", *files, "--format", "json", "--fail-on-regression")
    assert code == 1 and json.loads(out)["changes"][1]["verdict"] == "regressed"
    code, _, _ = run_cli(capsys, "trend", *files[:2], "--fail-on-regression")
    assert code == 0  # improving only


def test_trend_of_a_suites_last_finished_runs_names_the_changed_prompt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'trend.db'}"
    ids = []
    with Store.open(db) as store:
        for n, industry in enumerate((40, 55, 70, 90)):
            version = store.prompt_version("scenario_prompt:company_profile", f"Profile v{n}")
            run = company_run(f"r{n}", industry)
            run_id = store.create_run("profiles", "h", {})
            for r in run.responses:
                r.key = f"{run_id}|{r.key}"
                r.prompt_versions = {"scenario_prompt:company_profile": version}
            for j in run.judgments:
                j.response_key = f"{run_id}|{j.response_key}"
                j.judge_key = f"{run_id}|{j.judge_key}"
            store.record_responses(run_id, run.responses)
            store.record_judgments(run_id, run.judgments)
            store.finish_run(run_id, "finished")
            ids.append(run_id)
        store.create_run("profiles", "h", {})  # unfinished: never in a trend
    code, out, err = run_cli(capsys, "trend", "--suite", "profiles", "--last", "3", "--db", db)
    assert code == 0, err
    assert out.startswith("Trend of 3 runs")
    assert ids[0] not in out  # the last 3 finished, oldest first
    order = [out.index(f"{i}. {run_id}") for i, run_id in enumerate(ids[1:], 1)]
    assert order == sorted(order)
    assert (
        "scenario_prompt:company_profile v2" in out and "scenario_prompt:company_profile v4" in out
    )


def test_trend_refuses_what_it_cannot_show(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = results_file(tmp_path, company_run("v1", 60))
    for args in (["trend", one], ["trend"], ["trend", one, one, "-o", "json"]):
        code, _, err = run_cli(capsys, *args)
        assert code == 2, args
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    code, _, err = run_cli(
        capsys, "trend", "--suite", "nothing", "--db", f"sqlite:///{tmp_path}/e.db"
    )
    assert code == 2 and "a trend needs at least two" in err
