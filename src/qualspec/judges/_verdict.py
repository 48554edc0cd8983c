"""Pass/fail against a threshold and aggregates that keep unscored results visible."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Summary", "passed", "summarize", "unscored_note"]


def _is_score(score: float | None) -> bool:
    return score is not None and math.isfinite(score)


def passed(score: float | None, threshold: float) -> bool | None:
    """Whether a score reaches the threshold; ``None`` when unscored (never a fail).

    Example:
        >>> passed(7, 7), passed(6.5, 7), passed(None, 7)
        (True, False, None)
    """
    if score is None or not _is_score(score):
        return None
    return score >= threshold


@dataclass(frozen=True, slots=True)
class Summary:
    """Aggregate of a group of judgments.

    ``mean`` and ``pass_rate`` are over scored judgments only (``None`` when there are
    none); unscored ones are counted, never averaged in as zeros.
    """

    n: int
    n_scored: int
    n_unscored: int
    mean: float | None
    pass_rate: float | None
    n_pass: int
    n_fail: int


def summarize(scores: Sequence[float | None], threshold: float) -> Summary:
    """Summarize scores (``None`` = unscored) against a pass threshold.

    Example:
        >>> s = summarize([8, None, 5, 9], threshold=7)
        >>> (s.n, s.n_scored, s.n_unscored, s.n_pass, s.n_fail, s.pass_rate)
        (4, 3, 1, 2, 1, 0.6666666666666666)
    """
    scored = [float(s) for s in scores if s is not None and _is_score(s)]
    n_pass = sum(1 for s in scored if s >= threshold)
    return Summary(
        n=len(scores),
        n_scored=len(scored),
        n_unscored=len(scores) - len(scored),
        mean=math.fsum(scored) / len(scored) if scored else None,
        pass_rate=n_pass / len(scored) if scored else None,
        n_pass=n_pass,
        n_fail=len(scored) - n_pass,
    )


def unscored_note(summary: Summary) -> str:
    """``"k of N unscored"`` for reports, or ``""`` when every judgment has a score."""
    if summary.n_unscored == 0:
        return ""
    return f"{summary.n_unscored} of {summary.n} unscored"
