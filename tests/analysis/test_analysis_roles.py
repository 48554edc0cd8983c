"""Role gaps: the mean paired difference, a seeded bootstrap interval, the criteria."""

from __future__ import annotations

import pytest
from helpers_runs import RunBuilder

from qualspec.analysis import analyze_run


def two_roles(expert: list[float], naive: list[float], **kw: object) -> RunBuilder:
    b = RunBuilder()
    for i, (e, n) in enumerate(zip(expert, naive, strict=True)):
        b.add(0.0, {"cites studies": e, "is polite": 8.0}, role="expert", run_index=i, **kw)  # type: ignore[arg-type]
        b.add(0.0, {"cites studies": n, "is polite": 8.0}, role="naive", run_index=i, **kw)  # type: ignore[arg-type]
    return b


META = {"dimensions": {"roles": ["expert", "naive"], "candidates": ["gpt"]}}


def test_a_consistent_gap_has_an_interval_excluding_zero() -> None:
    b = two_roles([9, 9, 8, 9, 9, 8, 9, 9], [5, 6, 5, 4, 5, 6, 5, 5])
    analysis = analyze_run(b.run(**META), similarity="lexical")
    (gap,) = analysis.role_gaps
    assert (gap.candidate, gap.scenario, gap.role_a, gap.role_b) == ("gpt", None, "expert", "naive")
    assert gap.n == 8
    # response score = mean of the two criteria: the gap is half the criterion gap
    assert gap.gap == pytest.approx((8.75 - 5.125) / 2)
    assert 0 < gap.ci_low <= gap.gap <= gap.ci_high
    assert gap.criteria[0] == ("cites studies", pytest.approx(8.75 - 5.125))
    assert gap.criteria[1] == ("is polite", 0.0)
    assert any(
        o.startswith("gpt: expert role outperforms naive by 1.8 points (95% CI +")
        and "largest on 'cites studies'" in o
        for o in analysis.observations
    ), analysis.observations


def test_a_noisy_gap_has_an_interval_including_zero() -> None:
    b = two_roles([9, 3, 8, 4, 9, 2, 7, 5], [5, 7, 4, 8, 6, 6, 5, 7])
    analysis = analyze_run(b.run(**META), similarity="lexical")
    (gap,) = analysis.role_gaps
    assert gap.ci_low < 0 < gap.ci_high
    assert any(
        o.startswith("gpt: no clear difference between expert and naive")
        for o in analysis.observations
    )


def test_the_interval_is_reproducible_and_independent_of_record_order() -> None:
    b = two_roles([9, 3, 8, 4, 9, 2, 7, 5], [5, 7, 4, 8, 6, 6, 5, 7])
    first = analyze_run(b.run(**META), similarity="lexical").role_gaps
    again = analyze_run(b.run(**META), similarity="lexical").role_gaps
    b.responses.reverse()
    b.judgments.reverse()
    reordered = analyze_run(b.run(**META), similarity="lexical").role_gaps
    assert first == again == reordered


def test_gaps_per_scenario_and_every_candidate_agreeing() -> None:
    b = RunBuilder()
    for cand in ("gpt", "claude"):
        for scenario in ("s1", "s2"):
            for i in range(5):  # MIN_GAP_PAIRS per scenario: each gap has an interval
                b.add(
                    0.0, {"c": 9.0}, candidate=cand, role="expert", scenario=scenario, run_index=i
                )
                b.add(0.0, {"c": 4.0}, candidate=cand, role="naive", scenario=scenario, run_index=i)
    meta = {
        "dimensions": {
            "roles": ["naive", "expert"],
            "candidates": ["gpt", "claude"],
            "scenarios": ["s1", "s2"],
        }
    }
    analysis = analyze_run(b.run(**meta), similarity="lexical")
    scopes = [(g.candidate, g.scenario) for g in analysis.role_gaps]
    assert scopes == [(c, s) for c in ("gpt", "claude") for s in (None, "s1", "s2")]
    assert all(
        g.role_a == "naive" and g.gap == -5.0 and g.ci_high == -5.0 for g in analysis.role_gaps
    )
    assert (
        "expert role consistently outperforms naive (every candidate: 2 candidates, each gap's "
        "95% CI excludes 0, 20 pairs)"
    ) in analysis.observations


def test_no_gap_without_two_roles_or_without_pairs() -> None:
    b = RunBuilder()
    b.add(0.0, {"c": 9.0}, role="expert")
    b.add(0.0, {"c": 5.0}, role="naive", run_index=1)  # no partner with the same run index
    assert analyze_run(b.run(), similarity="lexical").role_gaps == ()
    single = RunBuilder()
    single.add(0.0, {"c": 9.0}, role="expert")
    assert analyze_run(single.run(), similarity="lexical").role_gaps == ()
