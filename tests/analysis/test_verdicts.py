"""``qualspec.analysis.run_verdicts``: the one verdict every report reads (issue 17, item
4), on stored records built by hand: aggregation, reasons, checks, field grades."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from itertools import product
from typing import Any

import pytest

from qualspec.analysis import (
    VerdictStream,
    answer_verdict,
    cell_key,
    judgments_by_response,
    run_verdicts,
    suite_order,
    verdicts_to_dict,
)
from qualspec.store import JudgmentRecord, ResponseRecord, RunRecord, RunSummary


def _run(
    answers: list[tuple[str, float | None, dict[str, Any]]], aggregation: str = "mean"
) -> RunRecord:
    """One cell of ``c`` at temperature 0.7: per run (judge score or None, extras)."""
    responses, judgments = [], []
    for i, (key, score, extra) in enumerate(answers):
        responses.append(
            ResponseRecord(
                key=key,
                candidate="c",
                role=None,
                scenario="s",
                input_id=None,
                temperature=0.7,
                effective_temperature=0.7,
                run_index=i,
                provider="p",
                model="m",
                text="an answer",
                error=extra.get("error"),
            )
        )
        if "error" in extra:
            continue
        if extra.get("judged", True):
            judgments.append(JudgmentRecord(key, "criterion", "jk", "p/judge", 7.0, score=score))
        for name, ok in extra.get("checks", {}).items():
            judgments.append(
                JudgmentRecord(
                    key, name, "", None, None, score=10.0 if ok else 0.0, passed=ok,
                    evaluator="expect",
                )
            )  # fmt: skip
        if "grade" in extra:
            judgments.append(
                JudgmentRecord(
                    key, "fields", "gk", "p/grader", 80.0, score=extra["grade"],
                    evaluator="field_grader", details={"type": "field_grade"},
                )
            )  # fmt: skip
    summary = RunSummary(
        id="r",
        suite_name="s",
        suite_hash="h",
        status="finished",
        started_at=datetime(2026, 1, 1, tzinfo=UTC),
        finished_at=None,
        metadata={"aggregation": aggregation, "judge": {"threshold": 7.0}},
    )
    return RunRecord(summary=summary, responses=responses, judgments=judgments)


def _cell(run: RunRecord) -> Any:
    (cell,) = run_verdicts(run).cells.values()
    return cell


def test_majority_passes_where_the_mean_fails_and_each_says_why() -> None:
    answers = [("a", 9.0, {}), ("b", 9.0, {}), ("c", 1.0, {})]
    mean = _cell(_run(answers, "mean_with_variance"))
    assert mean.passed is False and mean.reasons == ("6.3/10 < 7",)
    majority = _cell(_run(answers, "majority"))
    assert majority.passed is True and (majority.voted, majority.runs_passed) == (3, 2)
    two_fail = _cell(_run([("a", 9.0, {}), ("b", 1.0, {}), ("c", 2.0, {})], "majority"))
    assert two_fail.reasons == ("majority: 2 of 3 runs failed (2 scored below 7)",)


def test_a_failed_check_fails_the_cell_and_is_named() -> None:
    answers = [("a", 10.0, {"checks": {"max_words 5": i != 0}}) for i in range(3)]
    answers = [(f"k{i}", s, e) for i, (_, s, e) in enumerate(answers)]
    cell = _cell(_run(answers, "mean"))
    assert cell.passed is False and cell.score == 10.0
    assert cell.reasons == ("check 'max_words 5' failed in 1 of 3",)


def test_a_score_just_below_the_threshold_never_reads_as_the_threshold() -> None:
    cell = _cell(_run([("a", 6.96, {})]))
    assert cell.reasons == ("6.96/10 < 7",)


def test_checks_alone_never_pass_an_answer_its_judge_could_not_score() -> None:
    unscored = _cell(_run([("a", None, {"checks": {"contains x": True}})]))
    assert unscored.passed is None and unscored.label == "UNSCORED"
    failed = _cell(_run([("a", None, {"checks": {"contains x": False}})]))
    assert failed.passed is False
    # nothing was to score it (--no-judge): the checks decide
    no_judge = _cell(_run([("a", None, {"judged": False, "checks": {"contains x": True}})]))
    assert no_judge.passed is True


def test_field_grades_score_a_reference_graded_answer() -> None:
    run = _run([("a", None, {"judged": False, "grade": 75.0})])
    cell = _cell(run)
    assert (cell.passed, cell.score, cell.scale) == (False, 75.0, 100)
    assert cell.reasons == ("75/100 < 80",)
    data = verdicts_to_dict(run_verdicts(run))
    assert data["candidates"][0]["score"] == 75.0 and data["candidates"][0]["scale"] == 100


def test_errors_have_no_verdict() -> None:
    cell = _cell(_run([("a", None, {"error": "HTTP 500"})]))
    assert cell.passed is None and cell.label == "ERROR"


@pytest.mark.parametrize("aggregation", ["bogus"])
def test_an_unknown_aggregation_is_refused(aggregation: str) -> None:
    with pytest.raises(ValueError, match="unknown aggregation"):
        run_verdicts(_run([("a", 9.0, {})]), aggregation=aggregation)


@pytest.mark.parametrize("aggregation", ["mean", "majority", "mean_with_variance"])
def test_streamed_verdicts_are_the_whole_runs(aggregation: str) -> None:
    """``VerdictStream`` (a large run's page, built in parts) gives every row and cell
    :func:`run_verdicts` gives for the whole run, in the same order."""
    base = _run(
        [
            ("a", 8.0, {"checks": {"x": True}}),
            ("b", 5.0, {"checks": {"x": False}}),
            ("c", None, {"error": "boom"}),
            ("d", 9.0, {"grade": 60.0}),
        ],
        aggregation,
    )
    responses, judgments = [], []
    for candidate, temperature in product(("c2", "c1"), (0.7, 0.0)):
        tag = f"{candidate}-{temperature}-"
        for r in base.responses:
            responses.append(
                dataclasses.replace(
                    r, key=tag + r.key, candidate=candidate, temperature=temperature
                )
            )
        for j in base.judgments:
            judgments.append(dataclasses.replace(j, response_key=tag + j.response_key))
    run = dataclasses.replace(base, responses=responses[::-1], judgments=judgments)
    whole = run_verdicts(run)
    order = suite_order(run)
    by_response = judgments_by_response(run)
    stream = VerdictStream(RunRecord(summary=run.summary))
    rows = []
    for r in sorted(run.responses, key=lambda r: (order(cell_key(r)), r.run_index)):
        verdict = answer_verdict(by_response.get(r.key, ()), error=r.error is not None)
        rows += stream.add(cell_key(r), verdict)
    rows += stream.close()
    assert [(k, row) for k, row, _ in rows] == list(whole.rows.items())
    assert [c for _, _, cells in rows for c in cells] == list(whole.cells.items())
