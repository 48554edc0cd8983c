"""Issue 17, item 22: judge checks and calibrations are runs named for what they are, and
``-o json`` is refused (it wrote a file named ``json``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers_cli import run_cli, work_in
from qualspec.judges import DEFAULT_PAIRS
from qualspec.store import Store
from qualspec.testing import FakeServer

SUITE = """
name: named
providers:
  fake: {type: openai, base_url: "%(url)s", api_key_env: FAKE_NAMED_KEY}
candidates:
  - {name: bot, model: fake/m}
scenarios:
  - {name: capital, prompt: "What is the capital of France?", criteria: ["Names Paris"]}
judge: fake/judge
"""


@pytest.fixture(autouse=True)
def _work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work_in(tmp_path, monkeypatch, {"FAKE_NAMED_KEY": "sk-named", "COLUMNS": "200"})


def test_judge_checks_and_calibrations_are_named_runs_not_sessions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = f"sqlite:///{tmp_path / 'q.db'}"
    with FakeServer() as server:
        suite = tmp_path / "suite.yaml"
        suite.write_text(SUITE % {"url": server.base_url})
        code, out, err = run_cli(capsys, "run", str(suite), "--quiet", "--db", db)
        assert code == 0, out + err
        code, out, err = run_cli(capsys, "run", str(suite), "--quiet", "--db", db)  # cached
        assert code == 0, out + err
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-named")
        code, out, err = run_cli(
            capsys, "judge-check", "--judge", "openai/judge", "--pairs", "2", "--db", db
        )
        assert code == 0, out + err
    code, listing, err = run_cli(capsys, "runs", "list", "--db", db)
    assert code == 0, err
    assert "(session)" not in listing
    assert "judge-check openai/judge" in listing
    assert listing.count("calibration fake/judge") == 1  # measured once, then cached
    assert listing.count(" named ") == 2
    with Store.open(db) as store:
        runs = {r.suite_name: r for r in store.list_runs()}
        check = store.load_run(runs["judge-check openai/judge"].id)
        calibration = store.load_run(runs["calibration fake/judge"].id)
    assert check.summary.status == "finished" and len(check.responses) == 4
    meta = check.summary.metadata
    assert meta["kind"] == "judge_check" and meta["judge"] == "openai/judge"
    (summary,) = meta["judge_calibration"].values()
    assert summary["n_pairs"] == 2
    assert calibration.summary.metadata["kind"] == "calibration"
    assert len(calibration.responses) == 2 * DEFAULT_PAIRS


@pytest.mark.parametrize(
    "args",
    [
        ["run", "SUITE", "-o", "json"],
        ["run", "SUITE", "--output", "JSON"],
        ["runs", "export", "RUN", "-o", "json"],
        ["runs", "export", "RUN", "--format", "csv", "-o", "csv"],
        ["rubrics", "extract", "DIR", "-o", "json"],
        ["rubrics", "summarize", "EXTRACTED", "-o", "json"],
        ["rubrics", "judge", "DIR", "--rubrics", "R", "--out", "json"],
    ],
)
def test_a_format_after_o_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    code, out, err = run_cli(capsys, *args)
    assert code == 2
    (line,) = err.strip().splitlines()
    assert line.startswith("qualspec: error: -o ") and "a format, not a file" in line, err
    assert list(tmp_path.iterdir()) == []  # no file named json, nothing else either


def test_a_file_named_like_a_format_is_still_possible(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'q.db'}"
    with FakeServer() as server:
        suite = tmp_path / "suite.yaml"
        suite.write_text(SUITE % {"url": server.base_url})
        code, out, err = run_cli(
            capsys, "run", str(suite), "--quiet", "--db", db, "--no-calibration", "-o", "./json"
        )
    assert code == 0, out + err
    data = json.loads((tmp_path / "json").read_text())
    run_id = data["run"]["id"]
    code, out, err = run_cli(capsys, "runs", "export", run_id, "--db", db, "-o", "./csv")
    assert code == 0, err
    assert json.loads((tmp_path / "csv").read_text())["run"]["id"] == run_id
