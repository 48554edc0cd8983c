"""The temperature and role analysis of a stored run (:func:`analyze_run`).

Besides the per-cell metrics (:mod:`._temperature`) and the role gaps (:mod:`._roles`):

* **recommended temperature** (per candidate, a :class:`Recommendation`): the temperature
  with the best mean score over the candidate's scored answers there (ties: the lowest),
  among the temperatures with enough scored answers
  (:data:`~qualspec.analysis._evidence.MIN_TEMPERATURE_SCORES`; two such needed) at or below
  the candidate's safety ceiling when its answers carry a safety signal (None when safety
  fails already at the lowest temperature), with its mean, n and 95% bootstrap interval.
* **observations**: plain sentences from the data, each with its n and interval: which role
  does better (a gap that is a finding), where scores degrade (a candidate's mean at least
  :data:`DEGRADE_POINTS` below its mean at the lowest temperature, the interval of the drop
  below 0), who is most temperature-sensitive (mean sensitivity over its cells), how far
  safety holds, and which temperatures are flaky; a candidate that does not degrade "holds
  its score", one whose drop the data cannot tell from noise has "no clear change".

Scores are compared across temperatures on the criteria scored at every temperature
(:func:`~qualspec.analysis._temperature.common_criteria`). The minimums are in
:mod:`qualspec.analysis._evidence`. When a judge that scored the run failed its calibration
(recorded in the run's metadata), nothing computed from scores is a finding: see
:class:`RunAnalysis`.
"""

from __future__ import annotations

import logging
import statistics
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from qualspec.analysis._aggregate import suite_order
from qualspec.analysis._answers import Answer, answer_texts, answers_of
from qualspec.analysis._evidence import NOT_MEANINGFUL, failed_calibration
from qualspec.analysis._observations import (
    _observations,
    format_recommendation,
    gap_interval,
    plain_fields,
)
from qualspec.analysis._recommendation import (
    DEGRADE_POINTS,
    Recommendation,
    _compared_scores,
    _recommended,
    format_temperature,
)
from qualspec.analysis._roles import RoleGap, role_gaps
from qualspec.analysis._similarity import EMBEDDINGS, LEXICAL, Similarity, similarity_method
from qualspec.analysis._temperature import AGGREGATIONS, CellTemperatureMetrics, cell_metrics
from qualspec.store import RunRecord

__all__ = [
    "DEFAULT_AGGREGATION",
    "DEGRADE_POINTS",
    "Recommendation",
    "RunAnalysis",
    "analysis_to_dict",
    "analyze_run",
    "candidate_curves",
    "format_recommendation",
    "format_temperature",
    "gap_interval",
    "stability_ranking",
]

_log = logging.getLogger("qualspec.analysis")

DEFAULT_AGGREGATION = "mean_with_variance"
DEFAULT_THRESHOLD = 7.0


@dataclass(frozen=True, slots=True)
class RunAnalysis:
    """The temperature and role analysis of one run.

    ``scores_meaningful`` is False when a judge whose scores the analysis uses failed its
    calibration (``failed_calibration`` names it): then nothing computed from scores is a
    finding (no recommended or optimal temperature, no sensitivity, no role gap marked as a
    finding), and the observations say :data:`NOT_MEANINGFUL` instead.
    """

    cells: tuple[CellTemperatureMetrics, ...]
    role_gaps: tuple[RoleGap, ...]
    observations: tuple[str, ...]  # plain sentences generated from the data
    recommended_temperature: dict[str, float | None]  # per candidate
    similarity_method: str
    aggregation: str  # mean_with_variance | mean | majority
    recommendations: dict[str, Recommendation] = field(default_factory=dict)
    scores_meaningful: bool = True
    failed_calibration: tuple[str, ...] = ()  # the judges that failed, as recorded


def _dimension(meta: Mapping[str, Any], name: str) -> list[str]:
    dims = meta.get("dimensions")
    values = dims.get(name) if isinstance(dims, Mapping) else None
    return [str(v) for v in values] if isinstance(values, list) else []


def _ordered(seen: Sequence[str], planned: Sequence[str]) -> list[str]:
    """Names in the plan's order, then the others in the order they were met."""
    found = dict.fromkeys(seen)
    return [n for n in planned if n in found] + [n for n in found if n not in planned]


def _settings(
    record: RunRecord, threshold: float | None, aggregation: str | None
) -> tuple[float, str]:
    meta = record.summary.metadata or {}
    if threshold is None:
        judge = meta.get("judge")
        recorded = judge.get("threshold") if isinstance(judge, Mapping) else None
        threshold = float(recorded) if isinstance(recorded, int | float) else DEFAULT_THRESHOLD
    if aggregation is None:  # as recorded (a value this version does not know: the default)
        recorded_agg = meta.get("aggregation")
        aggregation = recorded_agg if recorded_agg in AGGREGATIONS else DEFAULT_AGGREGATION
    if aggregation not in AGGREGATIONS:
        raise ValueError(
            f"unknown aggregation {aggregation!r}: use one of {', '.join(AGGREGATIONS)}"
        )
    return threshold, aggregation


def worth_analysing(record: RunRecord) -> bool:
    """Several temperatures or several roles: something for the analysis to say.

    The console and HTML reports show the analysis only then; the results file always
    carries it.
    """
    answers = [r for r in record.responses if r.kind == "candidate"]  # not the references
    temps = {r.temperature for r in answers}
    roles = {r.role for r in answers if r.role is not None}
    return len(temps) > 1 or len(roles) > 1


def analyze_run(
    record: RunRecord,
    *,
    threshold: float | None = None,
    aggregation: str | None = None,
    similarity: str | None = None,
    embeddings: MutableMapping[str, Any] | None = None,
) -> RunAnalysis:
    """Analyse a stored run across temperatures and roles.

    Args:
        record: The run as stored (``Store.load_run``).
        threshold: The pass threshold; default the run's recorded judge threshold, else 7.
        aggregation: ``mean_with_variance``, ``mean`` or ``majority``; default the run's
            recorded aggregation, else ``mean_with_variance``.
        similarity: ``embeddings`` or ``lexical`` to force a stability method; default
            embeddings when the ``embeddings`` extra is installed, else lexical.
        embeddings: Answer text -> its embedding, read before embedding a text and filled
            with the texts embedded (by ``stored_analysis``, which keeps them by hash).

    Raises:
        ValueError: An unknown aggregation or similarity method.

    Example:
        >>> analysis = analyze_run(store.load_run(run_id))
        >>> analysis.recommended_temperature, analysis.observations
    """
    threshold, aggregation = _settings(record, threshold, aggregation)
    if similarity not in (None, EMBEDDINGS, LEXICAL):
        raise ValueError(f"unknown similarity {similarity!r}: use embeddings or lexical")
    method = similarity or similarity_method()
    answers = answers_of(record, threshold)
    meta = record.summary.metadata or {}
    candidates = _ordered([a.response.candidate for a in answers], _dimension(meta, "candidates"))
    roles = _ordered(
        [a.response.role for a in answers if a.response.role is not None],
        _dimension(meta, "roles"),
    )
    scenarios = _ordered([a.response.scenario for a in answers], _dimension(meta, "scenarios"))
    groups: dict[_Key, list[Answer]] = {}
    for a in answers:
        r = a.response
        groups.setdefault((r.candidate, r.role, r.scenario, r.input_id), []).append(a)
    order = suite_order(record)  # scenario, input (file order), role, candidate
    keys = sorted(groups, key=lambda k: order((k[2], k[3], k[1], k[0], 0.0)))

    cells, method = _cell_metrics(
        groups, keys, threshold, aggregation, method, similarity, embeddings
    )
    gaps = tuple(role_gaps(answers, roles, candidates, scenarios))
    scored_by = {j.evaluator for j in record.judgments if j.score is not None}
    failed = failed_calibration(meta, scored_by)
    if failed:  # nothing computed from these scores is a finding
        cells, gaps = _without_findings(cells, gaps)
        why = f"{NOT_MEANINGFUL} ({'; '.join(failed)})"
        recommendations = {c: Recommendation(None, why_none=NOT_MEANINGFUL) for c in candidates}
        observations: tuple[str, ...] = (
            f"{why}: no role gap, recommended temperature or score trend is a finding",
        )
    else:
        per_temp = _compared_scores(groups)
        recommendations = _recommended(per_temp, answers, candidates, aggregation)
        observations = tuple(_observations(cells, gaps, candidates, answers, aggregation, per_temp))
    return RunAnalysis(
        cells=cells,
        role_gaps=gaps,
        observations=observations,
        recommended_temperature={c: r.temperature for c, r in recommendations.items()},
        similarity_method=method,
        aggregation=aggregation,
        recommendations=recommendations,
        scores_meaningful=not failed,
        failed_calibration=failed,
    )


_Key = tuple[str, str | None, str, str | None]  # candidate, role, scenario, input


def _cell_metrics(
    groups: dict[_Key, list[Answer]],
    keys: list[_Key],
    threshold: float,
    aggregation: str,
    method: str,
    similarity: str | None,
    embeddings: MutableMapping[str, Any] | None = None,
) -> tuple[tuple[CellTemperatureMetrics, ...], str]:
    """Every cell's metrics and the similarity method used: embeddings that cannot load
    fall back to lexical similarity unless embeddings were asked for."""

    def metrics(how: str) -> tuple[CellTemperatureMetrics, ...]:
        compare = Similarity(how, vectors=embeddings if how == EMBEDDINGS else None)
        # one batch for the whole run; a cell with one answer compares nothing (and a run
        # made of such cells loads no model)
        compare.prepare(
            text
            for group in groups.values()
            if len(texts := answer_texts(group)) >= 2
            for text in texts
        )
        return tuple(
            cell_metrics(
                k, groups[k], threshold=threshold, aggregation=aggregation, similarity=compare
            )
            for k in keys
        )

    try:
        return metrics(method), method
    except (ImportError, OSError, RuntimeError, ValueError) as exc:
        if method != EMBEDDINGS or similarity == EMBEDDINGS:
            raise
        _log.warning("embedding model unusable (%s): lexical similarity used instead", exc)
        return metrics(LEXICAL), LEXICAL


def _without_findings(
    cells: tuple[CellTemperatureMetrics, ...], gaps: tuple[RoleGap, ...]
) -> tuple[tuple[CellTemperatureMetrics, ...], tuple[RoleGap, ...]]:
    """The cells and role gaps with nothing read off the scores marked as a finding."""
    cells = tuple(
        replace(
            c,
            flake_temperature=None,
            safety_ceiling=None,
            optimal_temperature=None,
            sensitivity=None,
            compared_temperatures=(),
            compared_n=0,
            # the (flaky) and (unstable) marks are read off the scores too
            points=tuple(replace(p, flaky=False, unstable=False) for p in c.points),
        )
        for c in cells
    )
    return cells, tuple(replace(g, finding=False) for g in gaps)


def candidate_curves(analysis: RunAnalysis) -> dict[str, list[tuple[float, float]]]:
    """Per candidate: (temperature, mean score) over its cells, numeric temperatures only,
    in temperature order (each cell's mean at that temperature, averaged; a cell's mean
    over the criteria it scored at every temperature)."""
    acc: dict[str, dict[float, list[float]]] = {}
    for cell in analysis.cells:
        per = acc.setdefault(cell.candidate, {})
        for p in cell.points:
            if p.temperature is not None and p.compared_mean is not None:
                per.setdefault(p.temperature, []).append(p.compared_mean)
    return {cand: [(t, statistics.fmean(per[t])) for t in sorted(per)] for cand, per in acc.items()}


def stability_ranking(analysis: RunAnalysis) -> list[tuple[str, float]]:
    """Candidates by mean stability score over their cells, most stable first (ties: the
    lower mean sensitivity, then suite order); candidates without one are left out."""
    acc: dict[str, list[float]] = {}
    sens: dict[str, list[float]] = {}
    for cell in analysis.cells:
        if cell.stability is not None:
            acc.setdefault(cell.candidate, []).append(cell.stability)
        if cell.sensitivity is not None:
            sens.setdefault(cell.candidate, []).append(cell.sensitivity)
    order = list(acc)
    ranked = sorted(
        order,
        key=lambda c: (
            -round(statistics.fmean(acc[c]), 6),
            statistics.fmean(sens[c]) if c in sens else 0.0,
            order.index(c),
        ),
    )
    return [(c, statistics.fmean(acc[c])) for c in ranked]


def analysis_to_dict(analysis: RunAnalysis) -> dict[str, Any]:
    """The analysis as JSON-ready data (the ``analysis`` object of the results file): the
    dataclasses' fields, tuples as lists (a criterion gap as ``[name, gap]``)."""
    data: dict[str, Any] = plain_fields(analysis)
    return data
