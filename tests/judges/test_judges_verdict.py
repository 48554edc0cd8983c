"""Pass/fail and aggregates: unscored results are counted, never averaged as zero."""

from __future__ import annotations

import pytest

from qualspec.judges import Summary, passed, summarize, unscored_note


def test_passed() -> None:
    assert passed(7, 7) is True
    assert passed(7.0, 7.5) is False
    assert passed(0, 0) is True
    assert passed(6.99, 7) is False
    assert passed(None, 7) is None
    assert passed(float("nan"), 7) is None


def test_summarize_counts_unscored_separately() -> None:
    summary = summarize([8, None, 5, 9, None], threshold=7)
    assert summary == Summary(
        n=5, n_scored=3, n_unscored=2, mean=pytest.approx(22 / 3), pass_rate=pytest.approx(2 / 3),
        n_pass=2, n_fail=1,
    )  # fmt: skip
    assert unscored_note(summary) == "2 of 5 unscored"


def test_summarize_zero_scores_are_real() -> None:
    summary = summarize([0, 0, None], threshold=7)
    assert (summary.mean, summary.n_fail, summary.n_unscored) == (0.0, 2, 1)


def test_summarize_empty_and_all_unscored() -> None:
    empty = summarize([], threshold=7)
    assert (empty.n, empty.mean, empty.pass_rate) == (0, None, None)
    assert unscored_note(empty) == ""
    none = summarize([None, None], threshold=7)
    assert (none.n_scored, none.mean, none.pass_rate, none.n_pass, none.n_fail) == (
        0, None, None, 0, 0,
    )  # fmt: skip
    assert unscored_note(none) == "2 of 2 unscored"


def test_unscored_note_empty_when_all_scored() -> None:
    assert unscored_note(summarize([7, 8], threshold=7)) == ""
