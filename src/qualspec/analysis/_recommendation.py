"""A candidate's recommended temperature with its evidence, and the scores it is read from."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qualspec.analysis._answers import Answer
from qualspec.analysis._bootstrap import stat_seed
from qualspec.analysis._evidence import MIN_TEMPERATURE_SCORES, mean_interval
from qualspec.analysis._temperature import common_criteria, comparable_score, safety_by_temperature

DEGRADE_POINTS = 1.0
"""A candidate *degrades* at a temperature where its mean score is this many points (of 10)
below its mean at the lowest temperature."""


@dataclass(frozen=True, slots=True)
class Recommendation:
    """A candidate's recommended temperature with its evidence.

    Attributes:
        temperature: The recommended temperature; None when there is none (``why_none``).
        mean: The mean score there (over the criteria scored at every temperature).
        n: Scored answers there.
        ci_low: 95% bootstrap interval of ``mean``.
        ci_high: Its upper end.
        compared: The temperatures compared (each with enough scored answers).
        why_none: Why there is no recommendation.
    """

    temperature: float | None
    mean: float | None = None
    n: int = 0
    ci_low: float | None = None
    ci_high: float | None = None
    compared: tuple[float, ...] = ()
    why_none: str | None = None


def format_temperature(temperature: float | None) -> str:
    """``0.7`` as ``0.7``; None (no temperature sent) as ``default``."""
    return "default" if temperature is None else f"{temperature:g}"


_PerTemp = dict[str, dict[float, list[float]]]


def _compared_scores(groups: Mapping[Any, Sequence[Answer]]) -> _PerTemp:
    """Per candidate and numeric temperature: its answers' scores over the criteria each
    cell scored at every temperature (see :func:`common_criteria`)."""
    out: _PerTemp = {}
    for group in groups.values():
        common, _excluded = common_criteria(group)
        for a in group:
            t = a.response.temperature
            score = comparable_score(a, common)
            if t is not None and score is not None:
                out.setdefault(a.response.candidate, {}).setdefault(t, []).append(score)
    return out


def _enough(per: Mapping[float, list[float]]) -> dict[float, list[float]]:
    """The temperatures with enough scored answers to be compared."""
    return {t: v for t, v in sorted(per.items()) if len(v) >= MIN_TEMPERATURE_SCORES}


def _candidate_ceiling(
    answers: Sequence[Answer], candidate: str, aggregation: str
) -> tuple[bool, float | None]:
    """(has a safety signal, ceiling) over every cell of ``candidate``: a temperature fails
    when one of its cells has a safety failure there; one without a signal holds."""
    by_cell: dict[tuple[Any, ...], list[Answer]] = {}
    for a in answers:
        r = a.response
        if r.candidate == candidate:
            by_cell.setdefault((r.role, r.scenario, r.input_id), []).append(a)
    failing: dict[float, bool] = {}
    signal = False
    for cell_answers in by_cell.values():
        for t, failed in safety_by_temperature(cell_answers, aggregation).items():
            if t is None:
                continue
            signal = signal or failed is not None
            failing[t] = failing.get(t, False) or failed is True
    if not signal:
        return False, None
    ceiling = None
    for t in sorted(failing):
        if failing[t]:
            break
        ceiling = t
    return True, ceiling


def _recommended(
    per_temp: _PerTemp,
    answers: Sequence[Answer],
    candidates: Sequence[str],
    aggregation: str,
) -> dict[str, Recommendation]:
    out: dict[str, Recommendation] = {}
    for cand in candidates:
        enough = _enough(per_temp.get(cand, {}))
        compared = tuple(enough)
        if len(enough) < 2:
            out[cand] = Recommendation(
                None,
                compared=compared,
                why_none=(
                    f"fewer than two temperatures with {MIN_TEMPERATURE_SCORES} or more "
                    "scored answers"
                ),
            )
            continue
        signal, ceiling = _candidate_ceiling(answers, cand, aggregation)
        allowed = enough
        if signal:
            allowed = {} if ceiling is None else {t: v for t, v in enough.items() if t <= ceiling}
        means = {t: statistics.fmean(v) for t, v in allowed.items()}
        if not means:
            out[cand] = Recommendation(
                None, compared=compared, why_none="safety fails at the lowest temperature"
            )
            continue
        best = max(means.values())
        t = next(t for t, m in means.items() if m == best)
        interval = mean_interval(allowed[t], stat_seed(cand, t))
        out[cand] = Recommendation(
            t,
            mean=best,
            n=len(allowed[t]),
            ci_low=None if interval is None else interval[0],
            ci_high=None if interval is None else interval[1],
            compared=compared,
        )
    return out
