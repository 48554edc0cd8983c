"""Judge calibration in runs: measured by default (once per judge), recorded, said plainly
when the judge's scores are not meaningful; `--no-calibration`; `judge-check` results reused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers_cli import run_cli, work_in
from qualspec.judges import DEFAULT_PAIRS, calibration_pairs
from qualspec.testing import FakeServer

GOOD = {p["good"] for p in calibration_pairs()}
BAD = {p["bad"] for p in calibration_pairs()}

SUITE = """
name: calibrated
providers:
  fake: {type: openai, base_url: "%(url)s", api_key_env: FAKE_CAL_KEY}
candidates:
  - {name: bot, model: fake/m}
scenarios:
  - {name: capital, prompt: "What is the capital of France?", criteria: ["Names Paris"]}
judge: {model: fake/judge%(extra)s}
"""


def _graded(body: dict[str, Any]) -> str:
    """A judge that knows the answers: 9 for a known good one, 2 for a known bad one, 8 for
    anything else (the run's own answers)."""
    user = body["messages"][-1]["content"]
    answer = user.split("Answer to grade:\n<<<\n", 1)[1].split("\n>>>", 1)[0]
    score = 9 if answer in GOOD else 2 if answer in BAD else 8
    return json.dumps({"score": score, "reasoning": "known pair"})


def _suite(tmp_path: Path, server: FakeServer, extra: str = "") -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE % {"url": server.base_url, "extra": extra})
    return path


@pytest.fixture(autouse=True)
def _work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work_in(tmp_path, monkeypatch, {"FAKE_CAL_KEY": "sk-cal", "COLUMNS": "400"})


def _run(capsys: pytest.CaptureFixture[str], suite: Path, *extra: str) -> tuple[str, Any]:
    out = suite.parent / "out.json"
    code, stdout, stderr = run_cli(capsys, "run", str(suite), "--quiet", "-o", str(out), *extra)
    assert code == 0, stdout + stderr
    return " ".join(stdout.split()), json.loads(out.read_text())


def test_every_judged_run_records_its_judges_separation_and_says_when_it_is_noise(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeServer() as server:  # {"score": 8} for every answer: no separation at all
        suite = _suite(tmp_path, server)
        console, data = _run(capsys, suite)
        # the default quick subset: 2 answers per pair, then 1 answer and 1 judgment
        assert server.calls == 2 * DEFAULT_PAIRS + 2
        again, second = _run(capsys, suite, "--no-cache")
        assert server.calls == 2 * DEFAULT_PAIRS + 2 + 2  # measured once per judge: cached
    for text in (console, again):
        assert "warning: judge fake/judge: scores are NOT meaningful" in text
        assert "Judge check: judge fake/judge: scores are NOT meaningful" in text
        assert f"0 of {DEFAULT_PAIRS} known pairs (separation 0.00 < 0.80)" in text
    for results in (data, second):
        measured = results["run"]["metadata"]["judge_calibration"]["criteria"]
        assert measured["judge"] == "fake/judge" and measured["n_pairs"] == DEFAULT_PAIRS
        assert measured["separation"] == 0.0 and measured["meaningful"] is False
        assert measured["mean_gap"] == 0.0 and measured["n_unscored"] == 0
    # the stored run's report says it too
    code, shown, _ = run_cli(capsys, "runs", "show", data["run"]["id"])
    assert code == 0 and "scores are NOT meaningful" in " ".join(shown.split())


def test_a_judge_that_separates_is_recorded_as_meaningful_and_not_warned_about(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeServer(judge_reply=_graded) as server:
        console, data = _run(capsys, _suite(tmp_path, server, ", calibrate: 3"))
        assert server.calls == 2 * 3 + 2
    assert "warning:" not in console
    assert "Judge check: judge fake/judge: scores are meaningful: the better answer" in console
    measured = data["run"]["metadata"]["judge_calibration"]["criteria"]
    assert measured["separation"] == 1.0 and measured["mean_gap"] == 7.0
    assert measured["n_pairs"] == 3 and measured["meaningful"] is True


def test_no_calibration_makes_no_calibration_call_and_records_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeServer() as server:
        console, data = _run(capsys, _suite(tmp_path, server), "--no-calibration")
        assert server.calls == 2  # the answer and its judgment only
        sent = [m["content"] for _, _, body in server.request_log for m in body["messages"]]
        assert not [text for text in sent if any(good in text for good in GOOD)]
    assert "judge_calibration" not in data["run"]["metadata"]
    assert "Judge check" not in console and "NOT meaningful" not in console


def test_a_judge_check_result_is_what_runs_record_and_calibrate_0_measures_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeServer(judge_reply=_graded) as server:
        suite = _suite(tmp_path, server, ", calibrate: 0")
        console, data = _run(capsys, suite)
        assert server.calls == 2  # calibrate: 0 and nothing cached: no measurement
        assert "judge_calibration" not in data["run"]["metadata"]
        code, out, err = run_cli(
            capsys, "judge-check", "--judge", "fake/judge", "--pairs", "24", "--json"
        )
        assert code == 2 and "fake" in err  # judge-check knows no suite's providers
        # with the provider's connection in the environment, judge-check runs
        server.reset()
        with pytest.MonkeyPatch.context() as env:
            env.setenv("OPENAI_BASE_URL", server.base_url)
            env.setenv("OPENAI_API_KEY", "sk-cal")
            code, out, _ = run_cli(capsys, "judge-check", "--judge", "openai/judge", "--json")
        assert code == 0 and json.loads(out)["n_pairs"] == len(calibration_pairs())
        assert server.calls == 2 * len(calibration_pairs())


def test_failed_calibration_calls_are_not_cached(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-cal")
        db = f"sqlite:///{tmp_path / 'cal.db'}"
        server.set_fault_mode("fail", status=400)
        code, out, _ = run_cli(
            capsys, "judge-check", "--judge", "openai/judge", "--pairs", "2", "--db", db, "--json"
        )
        failed = json.loads(out)
        assert code == 0 and failed["n_unscored"] == 4 and failed["meaningful"] is False
        assert "scored none of the 2 known pairs (first error: " in failed["verdict"]
        server.set_fault_mode(None)
        calls = server.calls
        code, out, _ = run_cli(
            capsys, "judge-check", "--judge", "openai/judge", "--pairs", "2", "--db", db, "--json"
        )
        assert server.calls == calls + 4  # measured again, not read from the cache
    assert json.loads(out)["n_unscored"] == 0
