"""Agreement with people on small cases worked by hand: Krippendorff's alpha (interval
and nominal), Spearman's rho, exact and within-1 agreement, the pass/fail confusion, panel
members read from ``details["panel"]``, and which judge to trust."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from qualspec.analysis import (
    MIN_LABELLED,
    krippendorff_alpha,
    people_agreement,
    spearman_rho,
)
from qualspec.store import JudgmentRecord, LabelRecord, ResponseRecord, RunRecord, RunSummary

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _run(judge: list[float], panel: list[list[float | None]] | None = None) -> RunRecord:
    responses = [
        ResponseRecord(f"r{i}", "c", None, "s", None, 0.0, 0.0, i, "p", "m", text=f"a{i}")
        for i in range(len(judge))
    ]
    judgments = []
    for i, score in enumerate(judge):
        details = None
        if panel is not None:
            details = {
                "panel": [
                    {
                        "judge": f"m{k}",
                        "model": f"openai/m{k}",
                        "score": s,
                        "passed": None if s is None else s >= 5,
                        "reasoning": "r",
                        "unscored_reason": None if s is not None else "no number",
                    }
                    for k, s in enumerate(panel[i])
                ]
            }
        judgments.append(
            JudgmentRecord(
                f"r{i}", "polite", "jk", "openai/judge", 5.0, score, score >= 5, details=details
            )
        )
    summary = RunSummary("run-1", "suite", "h", "finished", T0, T0)
    return RunRecord(summary, responses, judgments)


def _labels(scores: list[float], labeller: str = "ann") -> list[LabelRecord]:
    return [
        LabelRecord(f"r{i}", "polite", score=s, labeller=labeller) for i, s in enumerate(scores)
    ]


def test_alpha_rho_and_agreement_match_the_hand_computation() -> None:
    # judge 2 4 6 8, people 2 5 6 7. Interval alpha = 1 - (n-1) sum (a-b)^2 /
    # (n sum v^2 - (sum v)^2) with n = 8 values: sum v = 40, sum v^2 = 234,
    # 8 * 234 - 40^2 = 272, sum (a-b)^2 = 2: 1 - 7 * 2 / 272 = 129/136.
    report = people_agreement(_run([2, 4, 6, 8]), _labels([2, 5, 6, 7]))
    (row,) = report.judges
    assert (row.judge, row.model, row.n) == ("criteria", "openai/judge", 4)
    assert row.alpha == pytest.approx(129 / 136)
    assert row.rho == pytest.approx(1.0)  # the same order
    assert (row.exact, row.within_1) == (0.5, 1.0)
    # pass at 5: judge F F T T, people F T T T. Nominal alpha = 1 - (n-1) * 2 * mismatches
    # / (n^2 - sum n_c^2) = 1 - 7 * 2 * 1 / (64 - 25 - 9) = 16/30
    assert row.n_verdicts == 4
    assert row.alpha_pass == pytest.approx(16 / 30)
    assert row.confusion == {"both_pass": 2, "judge_only": 0, "people_only": 1, "both_fail": 1}
    assert (report.labels, report.answers, report.labellers) == (4, 4, ["ann"])
    assert "too few labels" in report.trust["polite"]  # 4 < MIN_LABELLED


def test_spearman_ranks_ties_by_their_mean_rank() -> None:
    # a ranks 1.5 1.5 3 4, b ranks 1 2 3 4: rho = pearson of the ranks = 0.9486...
    assert spearman_rho([1, 1, 2, 3], [1, 2, 3, 4]) == pytest.approx(0.9486832980505138)
    assert spearman_rho([3, 3, 3], [1, 2, 3]) is None  # one value: no rank order


def test_alpha_of_the_library_against_the_hand_formula_with_missing_values() -> None:
    # two raters, one unit rated once (not pairable): the same as without that unit
    assert krippendorff_alpha([[2, 4, 6, 8, 9], [2, 5, 6, 7, None]]) == pytest.approx(129 / 136)
    assert krippendorff_alpha([[3, 3], [3, 3]]) is None  # one value: alpha undefined


def test_panel_members_each_judge_and_the_best_is_trusted() -> None:
    n = MIN_LABELLED + 2
    people = [float(i % 11) for i in range(n)]
    good = people[:]  # member m0 agrees exactly
    poor = [10.0 - p for p in people]  # member m1 reverses
    silent: list[float | None] = [None] * n  # member m2 never scores
    combined = [(g + p) / 2 for g, p in zip(good, poor, strict=True)]
    run = _run(combined, [[g, p, s] for g, p, s in zip(good, poor, silent, strict=True)])
    report = people_agreement(run, _labels(people))
    rows = {r.judge: r for r in report.judges}
    assert set(rows) == {"criteria panel", "criteria: m0", "criteria: m1", "criteria: m2"}
    assert rows["criteria: m0"].alpha == pytest.approx(1.0)
    assert rows["criteria: m0"].model == "openai/m0"
    assert rows["criteria: m1"].rho == pytest.approx(-1.0)
    assert (rows["criteria: m2"].n, rows["criteria: m2"].unscored) == (0, n)
    assert report.trust["polite"].startswith("trust criteria: m0 (openai/m0): alpha 1.000")


def test_people_value_is_their_mean_and_their_own_alpha_is_reported() -> None:
    run = _run([4.0] * 6 + [8.0] * 6)
    ann = _labels([4.0] * 6 + [8.0] * 6, "ann")
    bob = _labels([6.0] * 6 + [8.0] * 6, "bob")
    report = people_agreement(run, ann + bob)
    (row,) = report.judges
    # people's value: 5 (the mean of 4 and 6) then 8; the judge 4 then 8
    assert (row.n, row.exact, row.within_1) == (12, 0.5, 1.0)
    # pass at 5: ann fails the first six, bob passes them: a tie, so no verdict there
    assert row.n_verdicts == 6
    assert report.labellers == ["ann", "bob"]
    assert report.people_alpha["polite"] == pytest.approx(
        krippendorff_alpha([[4.0] * 6 + [8.0] * 6, [6.0] * 6 + [8.0] * 6])
    )
