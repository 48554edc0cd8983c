"""A judge panel's scores: one member's verdict as the judgment keeps it, and how the
members' scores combine (see :mod:`qualspec.judges._panel`)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["MemberScore", "combine_scores"]


@dataclass(frozen=True, slots=True)
class MemberScore:
    """One member's verdict on one (answer, criterion), as the judgment keeps it."""

    judge: str
    model: str
    score: float | None
    passed: bool | None
    reasoning: str | None
    unscored_reason: str | None

    def as_dict(self) -> dict[str, Any]:
        """The stored shape (``details["panel"]`` entries)."""
        return {
            "judge": self.judge,
            "model": self.model,
            "score": self.score,
            "passed": self.passed,
            "reasoning": self.reasoning,
            "unscored_reason": self.unscored_reason,
        }


def combine_scores(
    method: str, scores: Sequence[float], threshold: float
) -> tuple[float | None, bool | None]:
    """The panel's (score, passed) from its members' scores (the unscored left out).

    ``median``, ``mean`` and ``min`` combine the scores (passed: the combined score
    reaches ``threshold``); ``majority`` passes when more members pass than fail (a tie
    fails: a panel split in two has not agreed that the answer passes), its score the
    median. No scores: ``(None, None)``.

    Example:
        >>> combine_scores("median", [6, 8, 7], 7)
        (7, True)
        >>> combine_scores("majority", [8, 3], 7)
        (5.5, False)
    """
    if not scores:
        return None, None
    if method == "mean":
        score = statistics.fmean(scores)
    elif method == "min":
        score = min(scores)
    else:
        score = statistics.median(scores)
    if method == "majority":
        votes = sum(1 if s >= threshold else -1 for s in scores)
        return score, votes > 0
    return score, score >= threshold
