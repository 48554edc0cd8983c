"""A panel's verdict from its members': the unscored left out and counted, never 0; all
unscored: unscored; every call failed: an error (resume asks again)."""

from __future__ import annotations

from qualspec.engine import Verdict
from qualspec.judges import CriteriaJudge, PanelJudge


def _panel(combine: str = "median") -> PanelJudge:
    members = [
        (name, CriteriaJudge(name=name, model=f"fake/{name}", threshold=7))
        for name in ("a", "b", "c")
    ]
    return PanelJudge(name="criteria", members=members, combine=combine, threshold=7)


def test_an_unscored_member_is_left_out_and_counted() -> None:
    found = _panel("min").combined(
        [Verdict(score=9, reasoning="fine"), Verdict(unscored_reason="no JSON"), Verdict(score=8)]
    )
    assert found.score == 8 and found.passed is True  # min of 9 and 8, not of 0
    assert found.details is not None and found.details["panel_unscored"] == 1
    assert found.details["panel"][1] == {
        "judge": "b",
        "model": "fake/b",
        "score": None,
        "passed": None,
        "reasoning": None,
        "unscored_reason": "no JSON",
    }
    assert found.reasoning == "min 8 of 2 judges (8-9); 1 more gave no score"


def test_a_failed_member_is_left_out_and_says_why() -> None:
    found = _panel().combined([Verdict(score=6), Verdict(error="HTTP 500"), Verdict(score=8)])
    assert found.error is None and found.score == 7
    assert found.details is not None
    assert found.details["panel"][1]["unscored_reason"] == "judge call failed: HTTP 500"


def test_no_member_scored() -> None:
    unscored = _panel().combined([Verdict(unscored_reason="x")] * 3)
    assert unscored.score is None and unscored.error is None
    assert unscored.unscored_reason == "no judge of the panel scored (x)"
    assert unscored.details is not None and unscored.details["panel_unscored"] == 3
    failed = _panel().combined([Verdict(error="HTTP 500")] * 3)
    assert failed.error == "HTTP 500" and failed.score is None
