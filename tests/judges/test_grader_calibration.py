"""Field-grader calibration (issue 17 item 20): `judge-check --grader` grades known field
pairs (an equal-meaning value and a clearly wrong one); a grader that gives every field the
same grade is reported as not meaningful; a reference-graded run measures its grader once
before it starts, records it and warns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers_cli import run_cli, work_in
from helpers_grading import fields_reply, graded_suite, knowing_grade
from qualspec.judges import DEFAULT_FIELD_PAIRS, field_calibration_pairs, read_reference
from qualspec.testing import FakeServer

KEY_ENV = "FAKE_GRADER_CAL_KEY"


class Grader:
    """A grader that knows the pairs (``knowing``) or gives every field 80 (``constant``);
    a reference model and a candidate that answer the same profile."""

    def __init__(self, knowing: bool) -> None:
        self.knowing = knowing
        self.grader_calls = 0

    def __call__(self, body: dict[str, Any]) -> str:
        text = body["messages"][-1]["content"]
        if body["model"] != "grader":
            return json.dumps({"name": "Acme", "industry": "SaaS"})
        self.grader_calls += 1
        if not self.knowing:
            return fields_reply(text, lambda _answer: (80, "semantic"))
        return fields_reply(text, lambda answer: knowing_grade(answer, 70))


@pytest.fixture(autouse=True)
def _work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work_in(tmp_path, monkeypatch, {KEY_ENV: "sk-grader-cal", "COLUMNS": "300"})


def test_the_pairs_are_decided_by_the_grader_not_by_a_rule() -> None:
    pairs = field_calibration_pairs()
    assert len(pairs) >= 10 and len({p["domain"] for p in pairs}) >= 3
    for pair in pairs:
        for value in (pair["good"], pair["bad"]):
            assert value.strip().casefold() != pair["reference"].strip().casefold()
        assert read_reference(json.dumps({pair["field"]: pair["reference"]}))[1] is None


@pytest.mark.parametrize(
    ("knowing", "separation", "verdict"),
    [
        (True, 1.0, "grader openai/grader: grades are meaningful"),
        (False, 0.0, "grader openai/grader: grades are NOT meaningful"),
    ],
)
def test_judge_check_grader_separates_known_field_pairs(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    knowing: bool,
    separation: float,
    verdict: str,
) -> None:
    grader = Grader(knowing)
    with FakeServer(judge_reply=grader) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-grader-cal")
        code, out, err = run_cli(capsys, "judge-check", "--grader", "openai/grader", "--json")
        assert code == 0, out + err
        data = json.loads(out)
        n = len(field_calibration_pairs())
        assert data["role"] == "grader" and data["n_pairs"] == n
        assert data["separation"] == separation
        assert data["verdict"].startswith(verdict)
        assert grader.grader_calls == 2 * n  # one call per value
        # the table for people, from the cache: no call
        code, out, err = run_cli(capsys, "judge-check", "--grader", "openai/grader")
        assert code == 0 and grader.grader_calls == 2 * n
    text = " ".join(out.split())
    assert f"Grader calibration: openai/grader ({n} known field pairs" in text
    assert f"Separation: {separation:.2f} (threshold 0.80)" in text
    assert verdict in text
    assert ("NOT SEPARATED" in text) == (not knowing)


def test_a_reference_graded_run_calibrates_its_grader_first_and_warns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    grader = Grader(knowing=False)  # every field 80: separates nothing
    with FakeServer(judge_reply=grader) as server:
        suite = graded_suite(tmp_path / "suite.yaml", server.base_url, KEY_ENV)
        code, out, err = run_cli(capsys, "run", str(suite), "--quiet", "-o", "out.json")
        assert code == 0, out + err
        assert grader.grader_calls == 2 * DEFAULT_FIELD_PAIRS  # every field decided by rule
        text = " ".join((out + err).split())
        assert "grader fake/grader: grades are NOT meaningful" in text
        data = json.loads((tmp_path / "out.json").read_text())
        measured = data["run"]["metadata"]["judge_calibration"]["field_grader"]
        assert measured["role"] == "grader" and measured["separation"] == 0.0
        assert measured["n_pairs"] == DEFAULT_FIELD_PAIRS and measured["meaningful"] is False
        # measured once: the next run reads it from the store
        code, out, err = run_cli(capsys, "run", str(suite), "--quiet", "-o", "again.json")
        assert code == 0 and grader.grader_calls == 2 * DEFAULT_FIELD_PAIRS
        # --no-calibration: not measured, not recorded
        code, out, err = run_cli(
            capsys, "run", str(suite), "--quiet", "--no-calibration", "-o", "off.json"
        )
        assert code == 0
        off = json.loads((tmp_path / "off.json").read_text())["run"]["metadata"]
        assert "judge_calibration" not in off
