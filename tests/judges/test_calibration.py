"""Judge calibration on known pairs: separation, gap, spread, cache, and the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from qualspec.cli import main
from qualspec.judges import calibration_pairs
from qualspec.testing import FakeServer

GOOD = {p["good"] for p in calibration_pairs()}


def _graded(body: dict[str, Any]) -> str:
    """A judge that knows the answers: 9 for a good one, 2 for a bad one."""
    user = body["messages"][-1]["content"]
    answer = user.split("Answer to grade:\n<<<\n", 1)[1].split("\n>>>", 1)[0]
    score = 9 if answer in GOOD else 2
    return json.dumps({"score": score, "reasoning": "known pair"})


def _check(tmp_path: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    db = f"sqlite:///{tmp_path / 'cal.db'}"
    with pytest.raises(SystemExit) as exc:
        main(["judge-check", "--judge", "openai/judge", "--db", db, "--json", *extra])
    return int(exc.value.code or 0), {}


def test_the_pair_set_is_large_and_covers_several_domains() -> None:
    pairs = calibration_pairs()
    assert len(pairs) >= 20
    assert len({p["domain"] for p in pairs}) >= 5
    assert all(p["good"] != p["bad"] for p in pairs)
    first = calibration_pairs(7)
    assert len({p["domain"] for p in first}) == 7  # a subset takes one pair per domain first


def test_a_judge_that_knows_the_answers_separates_them_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeServer(judge_reply=_graded) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        code, _ = _check(tmp_path, "--repeats", "2")
        first_calls = server.calls
        result = json.loads(capsys.readouterr().out)
        again, _ = _check(tmp_path, "--repeats", "2")
        assert server.calls == first_calls  # measured once: the second check is cached
    assert code == again == 0
    n = len(calibration_pairs())
    assert first_calls == n * 2 * 2  # every pair's two answers, twice
    assert result["separation"] == 1.0 and result["meaningful"] is True
    assert result["mean_gap"] == 7.0
    assert result["spread"] == 0.0
    assert result["by_domain"]["math"] == [4, 4]
    assert "scores are meaningful" in result["verdict"]


def test_a_judge_that_gives_everyone_the_same_score_is_not_meaningful(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeServer() as server:  # {"score": 8} for every answer
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        code, _ = _check(tmp_path, "--pairs", "6")
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert result["separation"] == 0.0 and result["n_pairs"] == 6
    assert result["mean_gap"] == 0.0
    assert "NOT meaningful" in result["verdict"]


def test_the_table_and_a_bad_judge_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeServer(judge_reply=_graded) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        db = f"sqlite:///{tmp_path / 'cal.db'}"
        with pytest.raises(SystemExit) as exc:
            main(["judge-check", "--judge", "openai/judge", "--db", db, "--pairs", "7"])
        assert exc.value.code in (0, None)
    out = capsys.readouterr().out
    assert "Separation: 1.00" in out and "safety" in out
    with pytest.raises(SystemExit) as exc:
        main(["judge-check", "--judge", "nosuchprovider/x", "--db", db])
    assert exc.value.code == 2


SUITE = """
name: calibrated
providers:
  fake: {type: openai, base_url: "%s"}
candidates:
  - {name: bot, model: fake/m}
scenarios:
  - {name: capital, prompt: "What is the capital of France?", criteria: ["Names Paris"]}
judge: {model: fake/judge, calibrate: 4}
"""


def test_a_run_measures_and_records_its_judge_separation_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    with FakeServer() as server:  # a judge that scores everything 8 separates nothing
        suite = tmp_path / "suite.yaml"
        suite.write_text(SUITE % server.base_url)
        out = tmp_path / "out.json"
        for _ in range(2):
            with pytest.raises(SystemExit) as exc:
                main(["run", str(suite), "--quiet", "--output", str(out), "--no-cache"])
            assert exc.value.code in (0, None)
        # run 1: 4 pairs x 2 answers + the answer + its judgment; run 2 reuses the measure
        assert server.calls == 4 * 2 + 2 + 2
    console = " ".join(capsys.readouterr().out.split())
    assert console.count("scores are NOT meaningful") >= 2
    assert "Judge check:" in console
    measured = json.loads(out.read_text())["run"]["metadata"]["judge_calibration"]["criteria"]
    assert measured["separation"] == 0.0 and measured["n_pairs"] == 4
    assert measured["meaningful"] is False
