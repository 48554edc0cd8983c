"""Temperature metrics of one (candidate, role, scenario, input) cell over its temperatures.

Per temperature (a :class:`TemperaturePoint`): the mean and population standard deviation
of the runs' scores, their PASS/FAIL counts, the majority vote, whether the runs disagree
(**flaky**) and whether the point is **unstable** (std above :data:`UNSTABLE_STD` points, or
failing after a lower temperature passed, on the criteria scored at every temperature).

Per cell (a :class:`CellTemperatureMetrics`), over the temperatures given as numbers (the
provider's default temperature, ``None``, is shown but has no place on the axis):

* **stability**: mean pairwise similarity (0-1) of every answer across temperatures and runs.
* **flake temperature**: the lowest temperature whose verdict fails (see *aggregation*).
* **safety ceiling**: the highest temperature below the first one with a safety failure
  (the highest tested when none fails); None without a safety signal, or when the lowest
  temperature already fails.
* **optimal temperature**: the temperature with the best mean score (ties: the lowest).
* **sensitivity**: population variance of the per-temperature mean scores.

Temperatures are **compared only on the criteria the cell scored at every one of them**
(an ``at_temperature`` criterion is left out, :attr:`CellTemperatureMetrics.excluded_criteria`;
the table's per-temperature scores and verdicts keep it): the flake temperature, the
optimal temperature and the sensitivity use these compared scores, and the optimal
temperature and sensitivity only the temperatures with at least
:data:`~qualspec.analysis._evidence.MIN_TEMPERATURE_SCORES` answers scored on them (None
with fewer than two such temperatures). A safety failure counts wherever it was judged.

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
from qualspec.analysis._evidence import MIN_TEMPERATURE_SCORES
from qualspec.analysis._similarity import Similarity

__all__ = [
    "AGGREGATIONS",
    "CellTemperatureMetrics",
    "TemperaturePoint",
    "UNSTABLE_STD",
    "cell_metrics",
    "common_criteria",
    "comparable_score",
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
    # over the criteria the cell scored at every temperature (what temperatures are
    # compared on): the mean and the number of answers scored on them
    compared_mean: float | None = None
    compared_n: int = 0


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
    # criteria scored at some of the cell's temperatures only (at_temperature): left out
    # of every comparison across temperatures
    excluded_criteria: tuple[str, ...] = ()
    # the temperatures compared (optimal, sensitivity): those with at least
    # MIN_TEMPERATURE_SCORES answers scored on the compared criteria; and the fewest
    # such answers at one of them (0: nothing compared)
    compared_temperatures: tuple[float, ...] = ()
    compared_n: int = 0


def comparable_score(answer: Answer, common: frozenset[str] | None) -> float | None:
    """An answer's score over the ``common`` criteria only (None: over all its criteria)."""
    if common is None:
        return answer.score
    values = [v for k, v in answer.scored.items() if k in common]
    return sum(values) / len(values) if values else None


def common_criteria(answers: Sequence[Answer]) -> tuple[frozenset[str] | None, tuple[str, ...]]:
    """(the criteria scored at every numeric temperature of ``answers`` that has a score,
    or None when that is all of them; the others, sorted)."""
    by_temp: dict[float, set[str]] = {}
    for a in answers:
        t = a.response.temperature
        if t is not None and a.scored:
            by_temp.setdefault(t, set()).update(a.scored)
    if len(by_temp) < 2:
        return None, ()
    sets = list(by_temp.values())
    common = set.intersection(*sets)
    excluded = set.union(*sets) - common
    if not excluded:
        return None, ()
    return frozenset(common), tuple(sorted(excluded))


def _compared_verdict(
    answers: Sequence[Answer], common: frozenset[str], aggregation: str, threshold: float
) -> bool | None:
    """A temperature's verdict over the common criteria (and the checks)."""
    verdicts: list[bool] = []
    scores: list[float] = []
    for a in answers:
        score = comparable_score(a, common)
        if score is not None:
            scores.append(score)
        if score is None and a.checks_ok is None:
            continue
        verdicts.append((score is None or score >= threshold) and a.checks_ok is not False)
    majority = None if not verdicts else sum(verdicts) * 2 > len(verdicts)
    if aggregation == "majority" or not scores:
        return majority
    return statistics.fmean(scores) >= threshold


def point_passed(point: TemperaturePoint, aggregation: str, threshold: float) -> bool | None:
    """A temperature's verdict under ``aggregation`` (see the module docstring)."""
    if aggregation == "majority":
        return point.majority_passed
    if point.mean is None:
        return point.majority_passed
    return point.mean >= threshold


def _point(
    temperature: float | None, answers: Sequence[Answer], common: frozenset[str] | None = None
) -> TemperaturePoint:
    scores = [a.score for a in answers if a.score is not None]
    compared = [s for a in answers if (s := comparable_score(a, common)) is not None]
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
        compared_mean=statistics.fmean(compared) if compared else None,
        compared_n=len(compared),
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
    common, excluded = common_criteria(answers)
    points, verdicts, safety = _points(by_temp, temps, common, aggregation, threshold)
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
    # compared: the temperatures with enough answers scored on the common criteria
    compared = [
        (p.temperature, p.compared_mean)
        for p, _v, _s in numeric
        if p.temperature is not None
        and p.compared_mean is not None
        and p.compared_n >= MIN_TEMPERATURE_SCORES
    ]
    optimal = sensitivity = None
    if len(compared) >= 2:
        best = max(m for _t, m in compared)
        optimal = next(t for t, m in compared if m == best)
        sensitivity = statistics.pvariance([m for _t, m in compared])
    compared_temps = tuple(t for t, _m in compared if t is not None)
    n_compared = min(
        (p.compared_n for p, _v, _s in numeric if p.temperature in compared_temps), default=0
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
        excluded_criteria=excluded,
        compared_temperatures=compared_temps if len(compared_temps) >= 2 else (),
        compared_n=n_compared if len(compared_temps) >= 2 else 0,
    )


def _points(
    by_temp: dict[float | None, list[Answer]],
    temps: Sequence[float | None],
    common: frozenset[str] | None,
    aggregation: str,
    threshold: float,
) -> tuple[list[TemperaturePoint], list[bool | None], list[bool | None]]:
    """Per temperature, in order: its point, its verdict over the compared criteria and its
    safety verdict."""
    points: list[TemperaturePoint] = []
    verdicts: list[bool | None] = []  # over the compared criteria
    safety: list[bool | None] = []
    passed_below = False
    for t in temps:
        point = _point(t, by_temp[t], common)
        verdict = point_passed(point, aggregation, threshold)
        if common is not None:  # compared with other temperatures: on the common criteria
            verdict = _compared_verdict(by_temp[t], common, aggregation, threshold)
        # "fails after passing at a lower temperature" is a claim about the temperatures:
        # both sides need enough scored answers (one answer each proves nothing)
        enough = point.compared_n >= MIN_TEMPERATURE_SCORES
        if verdict is False and passed_below and enough and not point.unstable:
            point = _replace_unstable(point)
        if verdict is True and enough:
            passed_below = True
        points.append(point)
        verdicts.append(verdict)
        safety.append(_safety(by_temp[t], aggregation))
    return points, verdicts, safety


def _replace_unstable(point: TemperaturePoint) -> TemperaturePoint:
    import dataclasses

    return dataclasses.replace(point, unstable=True)
