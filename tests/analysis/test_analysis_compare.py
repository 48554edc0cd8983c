"""compare_runs on constructed runs: field grades paired by candidate, input and field;
criteria judgments when a run has no field grades; breakdowns; the three formats."""

from __future__ import annotations

import json

from helpers_fields import FieldRunBuilder
from helpers_runs import RunBuilder

from qualspec.analysis import COMPARE_SCHEMA_VERSION, compare_runs, format_comparison
from qualspec.store import RunRecord

INPUTS = [f"c{i}" for i in range(1, 6)]
FIELDS = ["name", "industry", "founded_year", "employees"]
BASE = {
    "name": [100, 100, 95, 100, 90],
    "industry": [70, 60, 75, 65, 70],
    "founded_year": [100, 80, 100, 60, 100],
    "employees": [50, 40, 60, 55, 45],
}


def _run(
    run_id: str, bump: dict[str, float], candidates: tuple[str, ...] = ("llama", "gpt")
) -> RunRecord:
    builder = FieldRunBuilder(run_id)
    for c_index, candidate in enumerate(candidates):
        for i, input_id in enumerate(INPUTS):
            fields: dict[str, float | None] = {
                f: min(100.0, BASE[f][i] - 3 * c_index + bump.get(f, 0.0) + (i % 2)) for f in FIELDS
            }
            builder.add(candidate, input_id, fields)
    return builder.run()


def test_a_better_prompt_is_an_improvement_overall_and_in_the_fields_it_fixed() -> None:
    v1 = _run("v1", {})
    v2 = _run("v2", {"industry": 20, "employees": 25})
    result = compare_runs(v1, v2)
    assert result.source == "field_grades" and result.scale == 100
    assert result.overall is not None
    assert result.overall.n == 2 * 5 * 4  # candidates x inputs x fields
    assert result.overall.verdict == "improved"
    assert not result.has_regression
    by_field = {s.name: s.result for s in result.by_aspect}
    assert by_field["industry"].difference == 20
    assert by_field["industry"].verdict == "improved"  # 10 pairs, all +20
    assert by_field["name"].verdict == "no detectable change"
    assert by_field["name"].difference == 0
    assert {s.name for s in result.by_input} == {f"company_profile/{i}" for i in INPUTS}
    assert {s.name for s in result.by_candidate} == {"llama", "gpt"}
    # worst first
    assert result.by_aspect[0].name in ("name", "founded_year")


def test_a_regression_is_detected_and_identical_runs_are_no_change() -> None:
    v1 = _run("v1", {})
    worse = compare_runs(v1, _run("v2", {"industry": -30, "founded_year": -20, "name": -5}))
    assert worse.overall is not None and worse.overall.verdict == "regressed"
    assert worse.has_regression
    same = compare_runs(v1, _run("again", {}))
    assert same.overall is not None
    assert same.overall.verdict == "no detectable change"
    assert same.overall.difference == 0
    assert not same.has_regression


def test_unpaired_units_are_counted_and_left_out() -> None:
    v1 = _run("v1", {}, candidates=("llama", "gpt"))
    v2 = _run("v2", {"industry": 10}, candidates=("gpt", "mistral"))
    result = compare_runs(v1, v2)
    assert result.overall is not None and result.overall.n == 20  # gpt only
    assert result.only_a == 20 and result.only_b == 20
    assert [s.name for s in result.by_candidate] == ["gpt"]


def test_runs_without_field_grades_compare_their_criteria_judgments() -> None:
    a, b = RunBuilder(), RunBuilder()
    for t, run_index in [(0.0, 0), (0.0, 1), (0.7, 0), (0.7, 1)]:
        for s in ("greet", "refund", "ship", "price"):
            a.add(t, {"clear": 6.0, "polite": 7.0}, scenario=s, run_index=run_index)
            b.add(t, {"clear": 8.0, "polite": 7.0}, scenario=s, run_index=run_index)
    result = compare_runs(a.run(), b.run())
    assert result.source == "criteria" and result.scale == 10
    assert result.aspect_name == "criterion"
    assert result.overall is not None
    # run indexes averaged: (4 scenarios x 2 temperatures) units per criterion
    assert result.overall.n == 16
    by = {s.name: s.result for s in result.by_aspect}
    assert by["clear"].difference == 2.0 and by["clear"].verdict == "improved"
    assert by["polite"].verdict == "no detectable change"


def test_a_run_with_field_grades_against_one_without_falls_back_to_criteria() -> None:
    graded = _run("v1", {})
    plain = RunBuilder()
    plain.add(0.0, {"clear": 7.0})
    result = compare_runs(graded, plain.run())
    assert result.source == "criteria"
    assert result.overall is None  # the field-graded run has no criteria judgments
    text = format_comparison(result)
    assert "nothing to compare" in text


def test_the_three_formats() -> None:
    result = compare_runs(_run("v1", {}), _run("v2", {"industry": 20}))
    text = format_comparison(result, "text")
    assert text.startswith("qualspec compare v1 -> v2 (suite profiles; field accuracy 0-100)")
    assert "per field:" in text and "per input:" in text and "per candidate:" in text
    industry = next(line for line in text.splitlines() if line.strip().startswith("industry"))
    assert "+20.0" in industry and "improved" in industry
    assert "Verdict: improved" in text and "regression: no" in text
    md = format_comparison(result, "markdown")
    assert "### Per field" in md and "| industry |" in md.replace("  ", " ")
    data = json.loads(format_comparison(result, "json"))
    assert data["schema_version"] == COMPARE_SCHEMA_VERSION
    assert data["source"] == "field_grades" and data["has_regression"] is False
    assert data["overall"]["verdict"] == "improved"
    industry_row = next(r for r in data["by_field"] if r["name"] == "industry")
    assert industry_row["difference"] == 20
    assert set(industry_row) >= {"mean_a", "mean_b", "ci_low", "ci_high", "p_value", "effect"}
