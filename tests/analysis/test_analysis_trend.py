"""Issue 17, item 15 (seed 001): an accuracy trend across more than two runs, overall and
per model, each level with its n and 95% interval, each change between consecutive runs
paired with its interval and verdict (as ``compare``), and a run whose judge failed
calibration shown as not meaningful."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from helpers_fields import FieldRunBuilder, company_run

from qualspec.analysis import compare_runs, format_trend, run_trend, trend_to_dict
from qualspec.store import JudgmentRecord, ResponseRecord, RunRecord, RunSummary


def test_three_runs_give_levels_with_n_and_interval_and_each_change() -> None:
    v1, v2, v3 = company_run("v1", 60), company_run("v2", 85), company_run("v3", 50, founded=60)
    trend = run_trend([v1, v2, v3])
    assert trend.source == "field_grades" and trend.scale == 100
    assert [p.run_id for p in trend.points] == ["v1", "v2", "v3"]
    first = trend.points[0].overall
    assert first.n == 30  # 2 models x 5 inputs x 3 fields
    assert first.mean == pytest.approx((100 + 62 + 88) / 3)
    assert first.ci_low is not None and first.ci_high is not None
    assert first.ci_low <= first.mean <= first.ci_high
    gpt = trend.points[1].by_model["gpt"]
    assert gpt.n == 15 and gpt.mean == pytest.approx((100 + 87 + 88) / 3)
    # each change is the paired comparison compare makes of the same two runs
    one, two = trend.changes
    pairwise = compare_runs(v1, v2).overall
    assert one.comparison is not None and pairwise is not None
    assert (one.comparison.n, one.comparison.verdict) == (pairwise.n, pairwise.verdict)
    assert one.comparison.difference == pytest.approx(pairwise.difference)
    assert one.comparison.verdict == "improved"
    assert two.comparison is not None and two.comparison.verdict == "regressed"
    assert trend.has_regression
    assert trend.first_to_last is not None and trend.first_to_last.comparison is not None
    assert trend.model_changes["llama"][1].comparison.verdict == "regressed"  # type: ignore[union-attr]

    text = format_trend(trend)
    assert "Trend of 3 runs, oldest first (field accuracy 0-100" in text
    assert "1. v1" in text and "n=30  95% CI [" in text
    assert "2 -> 3: -" in text and "regressed" in text
    assert "Model gpt:" in text and "Model llama:" in text
    assert "Regression: 2 -> 3" in text
    data = json.loads(format_trend(trend, "json"))
    assert data == json.loads(json.dumps(trend_to_dict(trend)))
    assert [r["n"] for r in data["runs"]] == [30, 30, 30]
    assert data["changes"][0]["verdict"] == "improved" and data["has_regression"] is True
    assert set(data["runs"][0]["by_model"]) == {"gpt", "llama"}


def test_one_value_is_not_an_interval_and_a_new_model_has_no_change() -> None:
    tiny = FieldRunBuilder("t1")
    tiny.add("gpt", "acme", {"name": 80})
    later = FieldRunBuilder("t2")
    later.add("gpt", "acme", {"name": 90})
    trend = run_trend([tiny.run(), later.run(), company_run("t3", 70, models=("llama",))])
    level = trend.points[0].overall
    assert level.n == 1 and level.mean == 80 and level.ci_low is None and level.ci_high is None
    assert "(no interval: n < 2)" in format_trend(trend)
    # one pair: a difference, never a finding
    assert trend.changes[0].comparison is not None
    assert trend.changes[0].comparison.verdict == "no detectable change"
    # llama only in the last run: nothing to pair with
    assert trend.changes[1].comparison is None
    assert trend.changes[1].reason == "nothing scored in both runs"
    assert trend.points[0].by_model["llama"].mean is None


def _criteria_run(run_id: str, score: float, meaningful: bool) -> RunRecord:
    responses, judgments = [], []
    for n in range(4):
        key = f"{run_id}|c|{n}"
        responses.append(
            ResponseRecord(
                key=key,
                candidate="c",
                role=None,
                scenario="s",
                input_id=str(n),
                temperature=0.0,
                effective_temperature=0.0,
                run_index=0,
                provider="fake",
                model="m",
                text="x",
            )
        )
        judgments.append(
            JudgmentRecord(
                response_key=key,
                criterion="is right",
                judge_key=f"j|{key}",
                judge_model="fake/j",
                threshold=7,
                score=score + n % 2,
                passed=True,
            )
        )
    calibration = {"fake/j": {"meaningful": meaningful, "verdict": "judge fake/j: ..."}}
    summary = RunSummary(
        id=run_id,
        suite_name="s",
        suite_hash="h",
        status="finished",
        started_at=datetime(2026, 1, 1, tzinfo=UTC),
        finished_at=None,
        metadata={"judge_calibration": calibration},
    )
    return RunRecord(summary=summary, responses=responses, judgments=judgments)


def test_a_judge_that_failed_calibration_is_not_a_trend() -> None:
    trend = run_trend(
        [_criteria_run("a", 5, True), _criteria_run("b", 8, False), _criteria_run("c", 6, True)]
    )
    assert trend.source == "criteria" and trend.scale == 10
    assert [p.meaningful for p in trend.points] == [True, False, True]
    assert all(c.comparison is None for c in trend.changes)
    text = format_trend(trend)
    assert "not meaningful: judge failed calibration" in text
    assert "improved" not in text and "regressed" not in text
    # the two calibrated runs still compare first to last
    assert trend.first_to_last is not None and trend.first_to_last.comparison is not None


def test_a_trend_needs_two_runs() -> None:
    with pytest.raises(ValueError, match="at least two runs"):
        run_trend([company_run("only", 60)])
