"""No claim without its evidence (issue 17, items 1-3): the analysis states n and intervals,
makes no finding below the minimums, none from a judge that failed calibration, and compares
temperatures only on the criteria scored at every one of them."""

from __future__ import annotations

import pytest
from helpers_runs import RunBuilder

from qualspec.analysis import (
    MIN_GAP_PAIRS,
    MIN_TEMPERATURE_SCORES,
    NOT_MEANINGFUL,
    analysis_to_dict,
    analyze_run,
)

ROLES = {"dimensions": {"roles": ["mental_health_professional", "naive_engineer"]}}
FAILED = {
    "criteria": {
        "judge": "local/smollm2",
        "separation": 0.0,
        "meaningful": False,
        "verdict": "judge local/smollm2: scores are NOT meaningful",
    }
}


def roles_run(pairs: int, expert: float = 9.0, naive: float = 5.0) -> RunBuilder:
    b = RunBuilder()
    for i in range(pairs):
        b.add(0.0, {"c": expert}, role="mental_health_professional", run_index=i)
        b.add(0.0, {"c": naive}, role="naive_engineer", run_index=i)
    return b


# ------------------------------------------------------------------ item 2: n and interval


def test_a_gap_from_one_pair_has_no_interval_and_is_no_finding() -> None:
    # one candidate, one scenario, one temperature, one run (the case)
    analysis = analyze_run(roles_run(1, 7.0, 8.7).run(**ROLES), similarity="lexical")
    (gap,) = analysis.role_gaps
    assert gap.n == 1 and gap.ci_low is None and gap.ci_high is None and not gap.finding
    assert analysis.observations == (
        "gpt: too few paired scores to compare mental_health_professional and naive_engineer "
        f"(gap -1.7, n=1, too few pairs for an interval: at least {MIN_GAP_PAIRS} needed)",
    )
    assert not any("consistently" in o or "outperforms" in o for o in analysis.observations)


def test_the_minimum_of_pairs_for_an_interval_and_a_finding() -> None:
    below = analyze_run(roles_run(MIN_GAP_PAIRS - 1).run(**ROLES), similarity="lexical")
    (gap,) = below.role_gaps
    assert gap.ci_low is None and not gap.finding
    at = analyze_run(roles_run(MIN_GAP_PAIRS).run(**ROLES), similarity="lexical")
    (gap,) = at.role_gaps
    assert (gap.ci_low, gap.ci_high, gap.n, gap.finding) == (4.0, 4.0, MIN_GAP_PAIRS, True)
    assert at.observations == (
        "gpt: mental_health_professional role outperforms naive_engineer by 4.0 points "
        f"(95% CI +4.0 to +4.0, n={MIN_GAP_PAIRS}); largest on 'c'",
    )


def test_consistently_needs_more_than_one_candidate() -> None:
    b = roles_run(MIN_GAP_PAIRS)
    analysis = analyze_run(b.run(**ROLES), similarity="lexical")
    assert not any("consistently" in o for o in analysis.observations)


def test_a_recommended_temperature_needs_enough_answers_and_states_them() -> None:
    few = RunBuilder()
    for t, score in ((0.0, 6.0), (0.7, 9.0)):
        for i in range(MIN_TEMPERATURE_SCORES - 1):
            few.add(t, {"c": score}, run_index=i)
    analysis = analyze_run(few.run(), similarity="lexical")
    assert analysis.recommended_temperature == {"gpt": None}
    assert analysis.recommendations["gpt"].why_none == (
        f"fewer than two temperatures with {MIN_TEMPERATURE_SCORES} or more scored answers"
    )
    assert analysis.cells[0].optimal_temperature is None and analysis.cells[0].sensitivity is None
    assert not any("holds" in o or "degrades" in o for o in analysis.observations)

    enough = RunBuilder()
    for t, scores in ((0.0, [6.0, 6.5, 5.5]), (0.7, [9.0, 8.5, 9.5])):
        for i, score in enumerate(scores):
            enough.add(t, {"c": score}, run_index=i)
    analysis = analyze_run(enough.run(), similarity="lexical")
    rec = analysis.recommendations["gpt"]
    assert (rec.temperature, rec.mean, rec.n, rec.compared) == (0.7, 9.0, 3, (0.0, 0.7))
    assert rec.ci_low is not None and rec.ci_high is not None
    assert rec.ci_low < 9.0 < rec.ci_high
    cell = analysis.cells[0]
    assert (cell.optimal_temperature, cell.compared_n) == (0.7, 3)
    assert cell.sensitivity == pytest.approx(2.25)


# -------------------------------------------------------- item 1: a judge failing calibration


def test_a_judge_that_failed_calibration_makes_no_finding() -> None:
    b = RunBuilder()
    for i in range(6):
        for t in (0.0, 1.0):
            b.add(t, {"c": 9.0 - t * 3}, role="mental_health_professional", run_index=i)
            b.add(t, {"c": 4.0}, role="naive_engineer", run_index=i)
    ok = analyze_run(b.run(**ROLES), similarity="lexical")
    assert ok.scores_meaningful and any("outperforms" in o for o in ok.observations)
    assert ok.recommended_temperature == {"gpt": 0.0}

    analysis = analyze_run(b.run(**ROLES, judge_calibration=FAILED), similarity="lexical")
    assert not analysis.scores_meaningful
    assert analysis.failed_calibration == ("local/smollm2, separation 0.00",)
    assert analysis.observations == (
        f"{NOT_MEANINGFUL} (local/smollm2, separation 0.00): no role gap, recommended "
        "temperature or score trend is a finding",
    )
    assert analysis.recommended_temperature == {"gpt": None}
    assert analysis.recommendations["gpt"].why_none == NOT_MEANINGFUL
    assert analysis.role_gaps and not any(g.finding for g in analysis.role_gaps)
    for cell in analysis.cells:
        assert cell.optimal_temperature is cell.sensitivity is cell.flake_temperature is None
        assert cell.stability is not None  # the answers' similarity needs no judge
    data = analysis_to_dict(analysis)  # the results file's analysis carries the flag
    assert data["scores_meaningful"] is False
    assert data["recommended_temperature"] == {"gpt": None}
    assert all(g["finding"] is False for g in data["role_gaps"])


def test_a_failed_calibration_of_a_judge_that_scored_nothing_here_does_not_count() -> None:
    other = {"second": {**FAILED["criteria"], "judge": "other/judge"}}
    analysis = analyze_run(roles_run(MIN_GAP_PAIRS).run(**ROLES, judge_calibration=other))
    assert analysis.scores_meaningful and analysis.role_gaps[0].finding


# ------------------------------------------- item 3: the criteria scored at every temperature


def test_identical_answers_get_no_recommendation_from_at_temperature_criteria() -> None:
    b = RunBuilder()
    for i in range(3):  # the same answer everywhere; different criteria at 0 and at 1.5
        b.add(0.0, {"accurate": 9.0, "is conservative": 5.0}, run_index=i, text="Same.")
        b.add(0.7, {"accurate": 9.0}, run_index=i, text="Same.")
        b.add(1.5, {"accurate": 9.0, "is creative": 6.0}, run_index=i, text="Same.")
    analysis = analyze_run(b.run(), similarity="lexical")
    (cell,) = analysis.cells
    assert cell.stability == 1.0
    assert cell.excluded_criteria == ("is conservative", "is creative")
    assert [p.compared_mean for p in cell.points] == [9.0, 9.0, 9.0]
    assert [p.mean for p in cell.points] == [7.0, 9.0, 7.5]  # the verdicts keep every criterion
    assert cell.sensitivity == 0.0 and cell.optimal_temperature == 0.0  # a tie: the lowest
    assert cell.flake_temperature is None  # 0 fails on a criterion judged there only
    assert analysis.recommended_temperature == {"gpt": 0.0}
    assert analysis.recommendations["gpt"].mean == 9.0
    assert (
        "Left out of comparisons across temperatures (scored at some temperatures only): "
        "'is conservative', 'is creative'"
    ) in analysis.observations
    assert "gpt holds its score across temperatures (9.0 to 9.0, n>=3 per temperature)" in (
        analysis.observations
    )


def test_nothing_in_common_compares_nothing() -> None:
    b = RunBuilder()
    for i in range(3):
        b.add(0.0, {"a": 9.0}, run_index=i)
        b.add(1.0, {"b": 4.0}, run_index=i)
    analysis = analyze_run(b.run(), similarity="lexical")
    (cell,) = analysis.cells
    assert cell.optimal_temperature is None and cell.sensitivity is None
    assert cell.flake_temperature is None
    assert analysis.recommended_temperature == {"gpt": None}
    assert not any("degrades" in o for o in analysis.observations)


def test_failing_on_a_criterion_judged_at_one_temperature_only_is_not_unstable() -> None:
    b = RunBuilder()
    for i in range(3):
        b.add(0.0, {"accurate": 9.0}, run_index=i, text="Same.")
        b.add(1.0, {"accurate": 9.0, "does not state a dangerous dose": 2.0}, run_index=i)
    (cell,) = analyze_run(b.run(), similarity="lexical").cells
    _low, high = cell.points
    assert high.mean == 5.5 and high.compared_mean == 9.0  # the table shows 1.0 failing
    assert not high.unstable and cell.flake_temperature is None


def test_failing_after_passing_needs_enough_answers_on_both_sides() -> None:
    # one answer per temperature: passing at 0 and failing at 0.7 marks nothing unstable
    one = RunBuilder()
    one.add(0.0, {"c": 10.0})
    one.add(0.7, {"c": 0.0})
    (cell,) = analyze_run(one.run(), similarity="lexical").cells
    assert [p.unstable for p in cell.points] == [False, False]
    many = RunBuilder()
    for i in range(MIN_TEMPERATURE_SCORES):
        many.add(0.0, {"c": 10.0}, run_index=i)
        many.add(0.7, {"c": 0.0}, run_index=i)
    (cell,) = analyze_run(many.run(), similarity="lexical").cells
    assert [p.unstable for p in cell.points] == [False, True]


def test_a_judge_that_failed_calibration_marks_no_cell_flaky_or_unstable() -> None:
    b = RunBuilder()
    for i in range(MIN_TEMPERATURE_SCORES):
        b.add(0.0, {"c": 10.0}, run_index=i)
        b.add(0.7, {"c": 0.0 if i else 9.0}, run_index=i)
    (cell,) = analyze_run(b.run(), similarity="lexical").cells
    assert any(p.unstable or p.flaky for p in cell.points)
    failed = analyze_run(b.run(judge_calibration=FAILED), similarity="lexical")
    (cell,) = failed.cells
    assert not any(p.unstable or p.flaky for p in cell.points)
