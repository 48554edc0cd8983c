"""run_insights on constructed runs: one run per analysis pattern, each insight citing its
evidence (fields, inputs, models, numbers)."""

from __future__ import annotations

import json

from helpers_fields import FieldRunBuilder
from helpers_runs import RunBuilder

from qualspec.analysis import format_insights, run_insights

INPUTS = ["acme", "bolt", "cyra", "dune"]


def _good(builder: FieldRunBuilder, candidate: str, input_id: str, **over: float) -> None:
    fields: dict[str, float | None] = {"name": 100, "industry": 95, "founded_year": 90}
    fields.update(over)
    builder.add(candidate, input_id, fields)


def _kinds(builder: FieldRunBuilder, **metadata: object) -> list[str]:
    return [i.kind for i in run_insights(builder.run(**metadata)).insights]


def test_a_healthy_run_has_no_insight() -> None:
    builder = FieldRunBuilder()
    for candidate in ("gpt", "llama"):
        for input_id in INPUTS:
            _good(builder, candidate, input_id)
    result = run_insights(builder.run())
    assert result.insights == ()
    assert result.source == "field_grades" and result.answers == 8
    assert "No problem pattern found" in format_insights(result)


def test_overall_low_accuracy_cites_the_mean_and_the_reference_status() -> None:
    builder = FieldRunBuilder()
    for input_id in INPUTS:
        builder.add("gpt", input_id, {"name": 60, "industry": 50, "founded_year": 70})
    result = run_insights(builder.run())
    low = next(i for i in result.insights if i.kind == "low_accuracy")
    assert low.severity == "high"
    assert "58.0 of 100" in low.finding  # weighted: (60*2 + 50*2 + 70) / 5
    assert any("4 unvalidated" in line for line in low.evidence)
    assert "reference" in low.action


def test_a_field_that_always_fails_is_named_with_its_numbers_and_inputs() -> None:
    builder = FieldRunBuilder()
    for candidate in ("gpt", "llama"):
        for n, input_id in enumerate(INPUTS):
            _good(builder, candidate, input_id, founded_year=40 + n)
    result = run_insights(builder.run())
    assert [i.kind for i in result.insights] == ["failing_field"]
    insight = result.insights[0]
    assert "'founded_year' fails in every answer (8 of 8 below 80.0)" in insight.finding
    assert "founded_year" in insight.action
    assert insight.evidence[0] == "mean 41.5, best 43.0, threshold 80.0"
    assert "company_profile/acme" in insight.evidence[1]
    assert insight.data["answers"] == 8


def test_a_model_that_fails_where_others_pass_is_model_specific() -> None:
    builder = FieldRunBuilder()
    for input_id in INPUTS:
        _good(builder, "gpt", input_id)
        _good(builder, "mistral", input_id)
        _good(builder, "llama", input_id, industry=40, name=80)
    result = run_insights(builder.run())
    model = next(i for i in result.insights if i.kind == "model_specific")
    assert model.data["candidate"] == "llama"
    assert "'llama' scores 25.0 points below the others (70.0 against 95.0)" in model.finding
    assert "its worst fields: industry 40.0, name 80.0, founded_year 90.0" in model.evidence


def test_a_hard_input_is_cited_with_its_variance_and_worst_fields() -> None:
    builder = FieldRunBuilder()
    for candidate, industry in (("gpt", 30), ("llama", 10)):
        for input_id in INPUTS:
            if input_id == "dune":  # the sparse one
                builder.add(
                    candidate, input_id, {"name": 90, "industry": industry, "founded_year": 50}
                )
            else:
                _good(builder, candidate, input_id)
    result = run_insights(builder.run())
    hard = next(i for i in result.insights if i.kind == "hard_input")
    assert hard.data["input"] == "company_profile/dune"
    assert "Input 'company_profile/dune' is hard" in hard.finding
    assert "spread over candidates (std) 3.3" in hard.evidence[0]  # means 56.7 and 50.0
    assert hard.evidence[1].startswith("its worst fields: industry 20.0, founded_year 50.0")


def test_malformed_json_and_refusals_are_output_format_problems_of_the_model() -> None:
    builder = FieldRunBuilder()
    for input_id in INPUTS:
        _good(builder, "gpt", input_id)
    builder.add(
        "tiny", "acme", {"name": 0, "industry": 0, "founded_year": 0}, flags=["malformed_json"]
    )
    builder.add("tiny", "bolt", {"name": 0, "industry": 0, "founded_year": 0}, flags=["refusal"])
    for input_id in INPUTS[2:]:
        _good(builder, "tiny", input_id)
    result = run_insights(builder.run())
    fmt = next(i for i in result.insights if i.kind == "output_format")
    assert fmt.data["candidate"] == "tiny"
    assert "1 malformed json, 1 refusal of 4 answers" in fmt.finding


def test_inconsistent_grading_is_reported_only_when_a_grader_check_was_recorded() -> None:
    builder = FieldRunBuilder()
    for input_id in INPUTS:
        _good(builder, "gpt", input_id)
    assert "inconsistent_grading" not in _kinds(builder)
    check = {
        "repeats": 3,
        "items": 4,
        "flagged": 1,
        "max_spread": 5.0,
        "mean_spread": 3.5,
        "largest_spread": 12.0,
        "flagged_items": ["gpt company_profile/bolt (field_grader): 80, 92, 85 (spread 12.0)"],
    }
    result = run_insights(builder.run(grader_check=check))
    insight = next(i for i in result.insights if i.kind == "inconsistent_grading")
    assert "1 of 4 items spread more than 5.0 over 3 re-grades" in insight.evidence[0]
    assert "company_profile/bolt" in insight.evidence[1]
    calm = dict(check, flagged=0, flagged_items=[])
    assert "inconsistent_grading" not in _kinds(builder, grader_check=calm)


def test_runs_without_field_grades_use_their_criteria() -> None:
    builder = RunBuilder()
    for scenario in ("greet", "refund", "ship"):
        builder.add(0.0, {"clear": 8.0, "cites policy": 3.0}, scenario=scenario, candidate="gpt")
        builder.add(0.0, {"clear": 8.0, "cites policy": 4.0}, scenario=scenario, candidate="llama")
    result = run_insights(builder.run())
    assert result.source == "criteria" and result.scale == 10
    failing = next(i for i in result.insights if i.kind == "failing_field")
    assert "criterion 'cites policy' fails in every answer (6 of 6 below 7.00)" in failing.finding
    low = next(i for i in result.insights if i.kind == "low_accuracy")
    assert "qualspec judge-check" in low.action and "reference" not in low.action


def test_formats() -> None:
    builder = FieldRunBuilder()
    for input_id in INPUTS:
        builder.add("gpt", input_id, {"name": 60, "industry": 50, "founded_year": 70})
    result = run_insights(builder.run())
    text = format_insights(result)
    assert text.startswith("Insights for run r1 (suite profiles; field grades, mean 58.0 of 100")
    assert "1. [high] Overall accuracy is low" in text and "   Action: " in text
    assert "**[high] Overall accuracy is low" in format_insights(result, "markdown")
    data = json.loads(format_insights(result, "json"))
    assert data["insights"][0]["kind"] == "low_accuracy"
    assert data["insights"][0]["evidence"]


def test_a_field_only_one_model_fails_is_model_specific() -> None:
    builder = FieldRunBuilder()
    for input_id in INPUTS:
        _good(builder, "gpt", input_id)
        _good(builder, "mistral", input_id)
        _good(builder, "llama", input_id, founded_year=65)  # its overall mean stays close
    result = run_insights(builder.run())
    assert [i.kind for i in result.insights] == ["model_specific"]
    (insight,) = result.insights
    assert insight.data == {
        "candidate": "llama",
        "field": "founded_year",
        "mean": 65.0,
        "others_mean": 90.0,
    }
    assert "'llama' fails the field 'founded_year' in every answer (65.0)" in insight.finding
    assert "the others' mean 90.0 over 8 answers" in insight.evidence[0]
