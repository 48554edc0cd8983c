"""Temperature metrics of one (candidate, role, scenario, input) cell over its temperatures.

Per temperature (a :class:`TemperaturePoint`): the mean and population standard deviation
of the runs' scores, their PASS/FAIL counts, the majority vote, whether the runs disagree
(**flaky**) and whether the point is **unstable** (std above :data:`UNSTABLE_STD` points, or
failing after a lower temperature passed).

Per cell (a :class:`CellTemperatureMetrics`), over the temperatures given as numbers (the
provider's default temperature, ``None``, is shown but has no place on the axis):

* **stability**: mean pairwise similarity (0-1) of every answer across temperatures and runs.
* **flake temperature**: the lowest temperature whose verdict fails (see *aggregation*).
* **safety ceiling**: the highest temperature below the first one with a safety failure
  (the highest tested when none fails); None without a safety signal, or when the lowest
  temperature already fails.
* **optimal temperature**: the temperature with the best mean score (ties: the lowest).
* **sensitivity**: population variance of the per-temperature mean scores (None with fewer
  than two scored temperatures).

*Aggregation* of a temperature's runs decides its verdict: ``mean_with_variance`` and
``mean`` pass when the mean score reaches the threshold (a temperature without a score, only
``expect:`` checks: by the majority); ``majority`` passes when more runs passed than failed
(a tie fails). Under ``majority`` a
temperature has a safety failure when most of its runs do; otherwise when any run does.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from qualspec.analysis._answers import Answer, answer_texts, temperature_order
from qualspec.analysis._similarity import Similarity

__all__ = [
    "AGGREGATIONS",
    "CellTemperatureMetrics",
    "TemperaturePoint",
    "UNSTABLE_STD",
    "cell_metrics",
    "point_passed",
    "safety_by_temperature",
]

AGGREGATIONS = ("mean_with_variance", "mean", "majority")
UNSTABLE_STD = 1.5
"""A temperature whose runs' scores spread more than this (population std, points of 10)
is marked unstable."""


@dataclass(frozen=True, slots=True)
class TemperaturePoint:
    """One temperature of one cell, over its runs."""

    temperature: float | None
    mean: float | None  # mean judge score (0-10) over runs, unscored excluded
    std: float | None  # population std over runs (None with < 2 scored runs)
    n: int  # scored runs
    passed: int
    failed: int
    unscored: int
    majority_passed: bool | None  # majority vote of runs' PASS/FAIL
    flaky: bool  # runs disagree on PASS/FAIL at this temperature
    unstable: bool  # std above UNSTABLE_STD, or failing after passing at a lower temp


@dataclass(frozen=True, slots=True)
class CellTemperatureMetrics:
    """The temperature metrics of one (candidate, role, scenario, input_id)."""

    candidate: str
    role: str | None
    scenario: str
    input_id: str | None
    points: tuple[TemperaturePoint, ...]  # ordered by temperature
    stability: float | None  # mean pairwise similarity 0-1 of all answers across temps and runs
    similarity_method: str  # "embeddings" | "lexical"
    flake_temperature: float | None  # lowest temperature whose score falls below the threshold
    safety_ceiling: float | None  # highest temperature with no safety failure
    optimal_temperature: float | None  # best mean score (ties: lowest temperature)
    sensitivity: float | None  # variance of the per-temperature means


def point_passed(point: TemperaturePoint, aggregation: str, threshold: float) -> bool | None:
    """A temperature's verdict under ``aggregation`` (see the module docstring)."""
    if aggregation == "majority":
        return point.majority_passed
    if point.mean is None:
        return point.majority_passed
    return point.mean >= threshold


def _point(temperature: float | None, answers: Sequence[Answer]) -> TemperaturePoint:
    scores = [a.score for a in answers if a.score is not None]
    passed = sum(1 for a in answers if a.passed is True)
    failed = sum(1 for a in answers if a.passed is False)
    unscored = sum(1 for a in answers if a.score is None)
    mean = statistics.fmean(scores) if scores else None
    std = statistics.pstdev(scores) if len(scores) >= 2 else None
    majority = None if passed + failed == 0 else passed > failed
    return TemperaturePoint(
        temperature=temperature,
        mean=mean,
        std=std,
        n=len(scores),
        passed=passed,
        failed=failed,
        unscored=unscored,
        majority_passed=majority,
        flaky=passed > 0 and failed > 0,
        unstable=std is not None and std > UNSTABLE_STD,
    )


def _safety(answers: Sequence[Answer], aggregation: str) -> bool | None:
    signals = [a.safety_failed for a in answers if a.safety_failed is not None]
    if not signals:
        return None
    failures = sum(signals)
    if aggregation == "majority":
        return failures * 2 > len(signals)
    return failures > 0


def safety_by_temperature(
    answers: Sequence[Answer], aggregation: str
) -> dict[float | None, bool | None]:
    """Per temperature of one cell's answers: whether it has a safety failure (None: no
    safety signal), under ``aggregation`` (see the module docstring)."""
    by_temp: dict[float | None, list[Answer]] = {}
    for a in answers:
        by_temp.setdefault(a.response.temperature, []).append(a)
    return {t: _safety(group, aggregation) for t, group in by_temp.items()}


def cell_metrics(
    key: tuple[str, str | None, str, str | None],
    answers: Sequence[Answer],
    *,
    threshold: float,
    aggregation: str,
    similarity: Similarity,
) -> CellTemperatureMetrics:
    """The metrics of one cell from its answers (any temperatures, any runs).

    Args:
        key: (candidate, role, scenario, input_id).
        answers: The cell's answers.
        threshold: The pass threshold (0-10).
        aggregation: One of :data:`AGGREGATIONS`.
        similarity: How answers are compared (``embeddings`` or ``lexical``).
    """
    by_temp: dict[float | None, list[Answer]] = {}
    for a in answers:
        by_temp.setdefault(a.response.temperature, []).append(a)
    temps = sorted(by_temp, key=temperature_order)
    points: list[TemperaturePoint] = []
    verdicts: list[bool | None] = []
    safety: list[bool | None] = []
    passed_below = False
    for t in temps:
        point = _point(t, by_temp[t])
        verdict = point_passed(point, aggregation, threshold)
        if verdict is False and passed_below and not point.unstable:
            point = _replace_unstable(point)
        if verdict is True:
            passed_below = True
        points.append(point)
        verdicts.append(verdict)
        safety.append(_safety(by_temp[t], aggregation))
    numeric = [
        (p, v, s)
        for p, v, s in zip(points, verdicts, safety, strict=True)
        if p.temperature is not None
    ]
    flake = next((p.temperature for p, v, _s in numeric if v is False), None)
    ceiling: float | None = None
    if any(s is not None for _p, _v, s in numeric):
        for p, _v, s in numeric:
            if s is True:
                break
            ceiling = p.temperature
    scored = [p for p, _v, _s in numeric if p.mean is not None]
    optimal = None
    if scored:
        best = max(p.mean for p in scored if p.mean is not None)
        optimal = next(p.temperature for p in scored if p.mean == best)
    sensitivity = (
        statistics.pvariance([p.mean for p in scored if p.mean is not None])
        if len(scored) >= 2
        else None
    )
    texts = answer_texts(answers)
    candidate, role, scenario, input_id = key
    return CellTemperatureMetrics(
        candidate=candidate,
        role=role,
        scenario=scenario,
        input_id=input_id,
        points=tuple(points),
        stability=similarity.mean(texts),
        similarity_method=similarity.method,
        flake_temperature=flake,
        safety_ceiling=ceiling,
        optimal_temperature=optimal,
        sensitivity=sensitivity,
    )


def _replace_unstable(point: TemperaturePoint) -> TemperaturePoint:
    import dataclasses

    return dataclasses.replace(point, unstable=True)
