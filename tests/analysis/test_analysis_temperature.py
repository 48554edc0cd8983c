"""analyze_run's temperature metrics on constructed runs with known answers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from helpers_runs import RunBuilder

from qualspec.analysis import (
    UNSTABLE_STD,
    CellTemperatureMetrics,
    analysis_to_dict,
    analyze_run,
    candidate_curves,
    stability_ranking,
)
from qualspec.spec import BUILTIN_RUBRICS
from qualspec.store import RunRecord

SAFETY = BUILTIN_RUBRICS["safety"].criteria[0]


def curve(
    builder: RunBuilder, means: Sequence[tuple[float | None, Sequence[float]]], **kw: Any
) -> None:
    """One cell: per temperature, one run per score."""
    for temperature, scores in means:
        for i, score in enumerate(scores):
            builder.add(temperature, {"correct": score}, run_index=i, **kw)


def only_cell(run: RunRecord, **kw: Any) -> CellTemperatureMetrics:
    (cell,) = analyze_run(run, similarity="lexical", **kw).cells
    return cell


def test_flake_optimal_and_sensitivity_have_the_known_values() -> None:
    b = RunBuilder()
    # Pattern 2 of the seed: reasoning degrades at high temperature
    curve(b, [(0.0, [9.0] * 3), (0.7, [8.0] * 3), (1.0, [6.0] * 3), (1.5, [5.0] * 3)])
    cell = only_cell(b.run())
    assert [p.temperature for p in cell.points] == [0.0, 0.7, 1.0, 1.5]
    assert cell.flake_temperature == 1.0  # the lowest below 7
    assert cell.optimal_temperature == 0.0
    # population variance of 9, 8, 6, 5 (mean 7): (4 + 1 + 1 + 4) / 4
    assert cell.sensitivity == pytest.approx(2.5)
    assert cell.safety_ceiling is None  # no safety criterion, no refusal check
    assert cell.points[2].unstable  # failed after passing at a lower temperature
    assert not cell.points[1].unstable


def test_optimal_temperature_ties_go_to_the_lowest_and_creative_tasks_rise() -> None:
    b = RunBuilder()
    curve(b, [(0.0, [5.0] * 3), (0.7, [9.0] * 3), (1.0, [8.0] * 3), (1.5, [9.0] * 3)])
    cell = only_cell(b.run())
    assert cell.optimal_temperature == 0.7
    assert cell.flake_temperature == 0.0  # already below the threshold at the lowest


def test_a_stable_cell_has_no_flake_temperature_and_zero_sensitivity() -> None:
    b = RunBuilder()
    curve(b, [(0.0, [10.0] * 3), (0.7, [10.0] * 3), (1.5, [10.0] * 3)])
    cell = only_cell(b.run())
    assert cell.flake_temperature is None
    assert cell.sensitivity == 0.0
    assert cell.stability == 1.0  # identical answers
    assert all(p.std == 0.0 and p.n == 3 and not p.flaky for p in cell.points)


def test_safety_ceiling_from_a_safety_rubric_criterion() -> None:
    b = RunBuilder()
    for t, safe in [(0.0, 9.0), (0.5, 8.0), (1.0, 3.0), (1.5, 9.0)]:
        b.add(t, {"correct": 8.0, SAFETY: safe})
    cell = only_cell(b.run())
    # 1.0 fails safety: the ceiling is the temperature below it, even though 1.5 holds
    assert cell.safety_ceiling == 0.5


def test_safety_ceiling_from_criterion_text_naming_harm_and_from_a_refusal_check() -> None:
    b = RunBuilder()
    for t, score in [(0.0, 9.0), (1.0, 9.0), (1.5, 2.0)]:
        b.add(t, {"does not state a harmful dose": score})
    assert only_cell(b.run()).safety_ceiling == 1.0

    refusals = RunBuilder()  # Pattern 3 of the seed: the refusal leaks at 1.5
    for t, refused in [(0.0, True), (0.7, True), (1.5, False)]:
        refusals.add(t, {}, checks={"refusal true": refused})
    assert only_cell(refusals.run()).safety_ceiling == 0.7


def test_safety_ceiling_is_none_when_safety_fails_at_the_lowest_temperature() -> None:
    b = RunBuilder()
    for t in (0.0, 1.0):
        b.add(t, {"correct": 9.0}, checks={"refusal true": False})
    cell = only_cell(b.run())
    assert cell.safety_ceiling is None
    holds = RunBuilder()
    for t in (0.0, 1.0):
        holds.add(t, {"correct": 9.0}, checks={"refusal true": True})
    assert only_cell(holds.run()).safety_ceiling == 1.0  # the highest tested


def test_flaky_and_unstable_marks() -> None:
    b = RunBuilder()
    curve(b, [(0.0, [9.0, 9.0]), (1.0, [9.0, 5.0]), (1.5, [10.0, 4.0])])
    cell = only_cell(b.run())
    low, mid, high = cell.points
    assert not low.flaky and not low.unstable
    assert mid.flaky and mid.std == pytest.approx(2.0) and mid.std > UNSTABLE_STD
    assert (mid.passed, mid.failed, mid.n) == (1, 1, 2)
    assert mid.unstable
    assert high.flaky and high.std == pytest.approx(3.0) and high.unstable


def test_majority_and_mean_aggregation_disagree_on_a_known_cell() -> None:
    b = RunBuilder()
    # at 1.0: runs 8, 8, 1 -> mean 5.67 fails, but two of three runs pass
    curve(b, [(0.0, [9.0, 9.0, 9.0]), (1.0, [8.0, 8.0, 1.0])])
    run = b.run(aggregation="majority")
    by_majority = only_cell(run)  # the recorded aggregation is the default
    assert by_majority.flake_temperature is None
    assert by_majority.points[1].majority_passed is True
    by_mean = only_cell(run, aggregation="mean")
    assert by_mean.flake_temperature == 1.0
    assert analyze_run(run, similarity="lexical").aggregation == "majority"
    assert analyze_run(b.run(), similarity="lexical").aggregation == "mean_with_variance"
    with pytest.raises(ValueError, match="unknown aggregation"):
        analyze_run(run, aggregation="median")


def test_majority_tie_fails_and_threshold_comes_from_the_run() -> None:
    b = RunBuilder()
    curve(b, [(0.0, [9.0, 6.0]), (1.0, [6.5, 6.5])])
    run = b.run(judge={"threshold": 6.0}, aggregation="majority")
    cell = only_cell(run)
    assert cell.flake_temperature is None  # both pass at the recorded threshold 6
    strict = only_cell(run, threshold=7.0)
    assert strict.points[0].majority_passed is False  # 1 pass, 1 fail: a tie fails
    assert strict.flake_temperature == 0.0


def test_default_temperature_sorts_first_and_stays_off_the_axis() -> None:
    b = RunBuilder()
    curve(b, [(0.7, [4.0] * 3), (None, [9.0] * 3), (0.0, [8.0] * 3)])
    cell = only_cell(b.run())
    assert [p.temperature for p in cell.points] == [None, 0.0, 0.7]
    assert cell.optimal_temperature == 0.0  # None has the best score but no place on the axis
    assert cell.flake_temperature == 0.7


def test_unscored_runs_are_counted_not_scored() -> None:
    b = RunBuilder()
    b.add(0.0, {"correct": 9.0}, run_index=0)
    b.add(0.0, {"correct": None}, run_index=1)
    b.add(1.0, {"correct": None}, run_index=0)
    cell = only_cell(b.run())
    first, second = cell.points
    assert (first.n, first.unscored, first.mean, first.std) == (1, 1, 9.0, None)
    assert (second.n, second.mean, second.majority_passed) == (0, None, None)
    assert cell.sensitivity is None  # one scored temperature
    analysis = analyze_run(b.run(), similarity="lexical")
    assert analysis.recommended_temperature == {"gpt": None}  # one scored answer: no claim
    assert "gpt was scored at one temperature only (0): no trend" in analysis.observations


def test_recommended_temperature_stays_at_or_below_the_safety_ceiling() -> None:
    b = RunBuilder()
    for t, score, refused in [(0.0, 7.0, True), (0.7, 8.0, True), (1.5, 10.0, False)]:
        for i in range(3):
            b.add(t, {"correct": score}, checks={"refusal true": refused}, run_index=i)
    analysis = analyze_run(b.run(), similarity="lexical")
    assert analysis.recommended_temperature == {"gpt": 0.7}  # 1.5 scores best but leaks
    assert any("safety holds up to temp 0.7" in o for o in analysis.observations)


def test_observations_name_degradation_and_sensitivity() -> None:
    b = RunBuilder()
    curve(b, [(0.0, [9.0, 9.5, 8.5]), (0.7, [9.0] * 3), (1.5, [5.0, 5.5, 4.5])], candidate="claude")
    curve(b, [(0.0, [9.0] * 3), (0.7, [9.0] * 3), (1.5, [8.5] * 3)], candidate="gpt4")
    analysis = analyze_run(
        b.run(dimensions={"candidates": ["claude", "gpt4"]}), similarity="lexical"
    )
    assert any(
        o.startswith("claude degrades at temp 1.5 (9.0 -> 5.0; change 95% CI -")
        and o.endswith(", n=3 and 3)")
        for o in analysis.observations
    ), analysis.observations
    assert (
        "gpt4 holds its score across temperatures (8.5 to 9.0, n>=3 per temperature)"
        in analysis.observations
    )
    assert any(
        o.startswith("claude shows more temperature sensitivity than gpt4")
        for o in analysis.observations
    )
    assert candidate_curves(analysis) == {
        "claude": [(0.0, 9.0), (0.7, 9.0), (1.5, 5.0)],
        "gpt4": [(0.0, 9.0), (0.7, 9.0), (1.5, 8.5)],
    }

    both = RunBuilder()
    curve(both, [(0.0, [9.0, 9.5, 8.5]), (1.5, [5.0, 5.5, 4.5])], candidate="a")
    curve(both, [(0.0, [8.0, 8.5, 7.5]), (1.5, [6.0, 6.5, 5.5])], candidate="b")
    assert (
        "All candidates degrade at temp 1.5"
        in analyze_run(both.run(), similarity="lexical").observations
    )


def test_stability_ranking_and_similarity_method_are_reported() -> None:
    b = RunBuilder()
    for t in (0.0, 1.0):
        b.add(t, {"correct": 9.0}, candidate="steady", text="Paris is the capital of France.")
    b.add(0.0, {"correct": 9.0}, candidate="drifty", text="Paris is the capital of France.")
    b.add(1.0, {"correct": 9.0}, candidate="drifty", text="Bananas orbit quietly sideways.")
    analysis = analyze_run(b.run(), similarity="lexical")
    assert analysis.similarity_method == "lexical"
    assert all(c.similarity_method == "lexical" for c in analysis.cells)
    ranking = stability_ranking(analysis)
    assert [name for name, _s in ranking] == ["steady", "drifty"]
    assert ranking[0][1] == 1.0 and ranking[1][1] < 0.5
    data = analysis_to_dict(analysis)
    assert data["similarity_method"] == "lexical" and len(data["cells"]) == 2
    assert data["cells"][0]["points"][0]["temperature"] == 0.0


def test_aggregation_is_a_suite_field_with_a_default() -> None:
    from qualspec import Candidate, Evaluation, Scenario

    fields = {
        "name": "e",
        "candidates": [Candidate(name="c", model="local/smollm2")],
        "scenarios": [Scenario(name="s", prompt="p", criteria=["c"])],
    }
    assert Evaluation(**fields).aggregation == "mean_with_variance"  # type: ignore[arg-type]
    assert Evaluation(**fields, aggregation="majority").aggregation == "majority"  # type: ignore[arg-type]


def test_a_safety_criterion_at_one_temperature_only() -> None:
    # the example's at_temperature criterion: judged at 1.0 only; 0.0 and 0.5 hold
    b = RunBuilder()
    for i in range(3):
        b.add(0.0, {"accurate": 9.0}, run_index=i)
        b.add(0.5, {"accurate": 9.0}, run_index=i)
        b.add(1.0, {"accurate": 9.0, "does not state a dangerous dose": 2.0}, run_index=i)
    analysis = analyze_run(b.run(), similarity="lexical")
    assert analysis.cells[0].safety_ceiling == 0.5
    assert analysis.recommended_temperature == {"gpt": 0.0}
    # the safety criterion was judged at 1.0 only: 0 and 0.5 are not said to hold
    assert (
        "gpt: safety fails at temp 1 (judged at temp 1 only; safety judged on 3 answers)"
        in analysis.observations
    )
