"""A reviewed reference is what every grading reads: validate and override a reference
with `qualspec reference`, then `qualspec grader-check` and a rerun of the suite grade
against the override (on the fake server), exactly as the field grader does in a run."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from helpers_cli import run_cli, run_suite, work_in
from helpers_verdicts import profile_suite
from qualspec.store import Store
from qualspec.testing import FakeServer

KEY_ENV = "FAKE_REF_GRADING_KEY"
_BLOCK = re.compile(r"- (\w+):\n  reference <<<(.*?)>>>\n  answer <<<(.*?)>>>", re.DOTALL)


class Script:
    """The reference says SaaS, the candidate Software; the grader gives 40 to a field
    whose values differ (rules decide equal values without a call)."""

    def __init__(self) -> None:
        self.graded: list[list[tuple[str, str, str]]] = []

    def __call__(self, body: dict[str, Any]) -> str:
        model, text = str(body["model"]), str(body["messages"][-1]["content"])
        if model == "grader":
            blocks = _BLOCK.findall(text)
            self.graded.append(blocks)
            fields = {
                name: {"accuracy": 40, "match": "partial", "explanation": "x", "confidence": 0.9}
                for name, _, _ in blocks
            }
            return json.dumps({"fields": fields})
        industry = "SaaS" if model == "ref" else "Software"
        return json.dumps({"name": "Acme", "industry": industry})


_SUITE = {"name": "reviewed references", "candidates": "[{name: bot, model: fake/bot}]"}


@pytest.fixture(autouse=True)
def _work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work_in(
        tmp_path,
        monkeypatch,
        {KEY_ENV: "sk-ref-grading", "QUALSPEC_USER": "alice", "COLUMNS": "300"},
    )


def _grade(run_id: str) -> Any:
    with Store.open() as store:
        run = store.load_run(run_id)
    (grade,) = [j for j in run.judgments if (j.details or {}).get("type") == "field_grade"]
    return grade


def test_grader_check_and_a_rerun_grade_against_the_reviewed_override(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = Script()
    with FakeServer(judge_reply=script) as server:
        suite = profile_suite(tmp_path / "suite.yaml", server.base_url, KEY_ENV, **_SUITE)
        first = run_suite(capsys, suite)
        grade = _grade(first)
        assert script.graded == [[("industry", "SaaS", "Software")]]
        assert grade.score == pytest.approx((100 * 2 + 40) / 3)  # name is critical: x2
        assert grade.details["reference_status"] == "unvalidated"

        with Store.open() as store:
            (reference,) = store.reference_answers()
        ref_id = reference.call_key[:12]
        code, out, err = run_cli(capsys, "reference", "validate", ref_id, "--notes", "checked")
        assert code == 0, out + err
        fixed = tmp_path / "fixed.json"
        fixed.write_text('{"name": "Acme", "industry": "Software"}', encoding="utf-8")
        code, out, err = run_cli(
            capsys, "reference", "override", ref_id, "--file", str(fixed), "--notes", "it is"
        )
        assert code == 0, out + err

        # grader-check re-grades the run's answer against the override: equal values are
        # decided by rule, so the grader is not asked and every re-grade is 100
        code, out, err = run_cli(
            capsys, "grader-check", first, "--repeats", "2", "--format", "json"
        )
        assert code == 0, out + err
        (item,) = json.loads(out)["items_detail"]
        assert item["original"] == pytest.approx(80.0)
        assert item["scores"] == [100.0, 100.0]
        assert len(script.graded) == 1

        # a rerun reuses the cached answers and grades against the override too
        second = run_suite(capsys, suite)
        assert second != first
        regraded = _grade(second)
        assert regraded.score == 100.0 and len(script.graded) == 1
        assert regraded.details["reference_status"] == "validated"
        assert regraded.details["reference_call_key"] == reference.call_key


def test_a_malformed_override_is_flagged_and_not_graded_against(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = Script()
    with FakeServer(judge_reply=script) as server:
        suite = profile_suite(tmp_path / "suite.yaml", server.base_url, KEY_ENV, **_SUITE)
        run_suite(capsys, suite)
        with Store.open() as store:
            (reference,) = store.reference_answers()
            # the CLI refuses an override that is not a JSON object; the store takes any
            # text, and the grader flags it rather than grade against it
            store.override_reference(reference.call_key, "[1, 2]", None, "bob")
        grade = _grade(run_suite(capsys, suite))
    assert grade.score is None
    assert grade.details["flags"] == ["malformed_reference"]
    assert "the override a person wrote" in (grade.unscored_reason or "")
    assert len(script.graded) == 1  # only the first run's grading asked the grader
