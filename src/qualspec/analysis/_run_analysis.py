"""The temperature and role analysis of a stored run (:func:`analyze_run`).

Besides the per-cell metrics (:mod:`._temperature`) and the role gaps (:mod:`._roles`):

* **recommended temperature** (per candidate): the temperature with the best mean score over
  the candidate's cells (each cell's mean at that temperature, averaged; ties: the lowest),
  among the temperatures at or below the candidate's safety ceiling when its answers carry a
  safety signal (None when safety fails already at the lowest temperature).
* **observations**: plain sentences from the data: which role does better (a gap whose 95%
  interval excludes 0), where scores degrade (a candidate's mean at least
  :data:`DEGRADE_POINTS` below its mean at the lowest temperature), who is most
  temperature-sensitive (mean sensitivity over its cells), how far safety holds, and which
  temperatures are flaky; a candidate that does not degrade "holds its score".
"""

from __future__ import annotations

import logging
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qualspec.analysis._aggregate import suite_order
from qualspec.analysis._answers import Answer, answer_texts, answers_of, temperature_order
from qualspec.analysis._roles import RoleGap, role_gaps
from qualspec.analysis._similarity import EMBEDDINGS, LEXICAL, Similarity, similarity_method
from qualspec.analysis._temperature import (
    AGGREGATIONS,
    CellTemperatureMetrics,
    cell_metrics,
    safety_by_temperature,
)
from qualspec.store import RunRecord

__all__ = [
    "DEFAULT_AGGREGATION",
    "DEGRADE_POINTS",
    "RunAnalysis",
    "analysis_to_dict",
    "analyze_run",
    "candidate_curves",
    "format_temperature",
    "stability_ranking",
]

_log = logging.getLogger("qualspec.analysis")

DEFAULT_AGGREGATION = "mean_with_variance"
DEFAULT_THRESHOLD = 7.0
DEGRADE_POINTS = 1.0
"""A candidate *degrades* at a temperature where its mean score is this many points (of 10)
below its mean at the lowest temperature."""


@dataclass(frozen=True, slots=True)
class RunAnalysis:
    """The temperature and role analysis of one run."""

    cells: tuple[CellTemperatureMetrics, ...]
    role_gaps: tuple[RoleGap, ...]
    observations: tuple[str, ...]  # plain sentences generated from the data
    recommended_temperature: dict[str, float | None]  # per candidate
    similarity_method: str
    aggregation: str  # mean_with_variance | mean | majority


def format_temperature(temperature: float | None) -> str:
    """``0.7`` as ``0.7``; None (no temperature sent) as ``default``."""
    return "default" if temperature is None else f"{temperature:g}"


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
) -> RunAnalysis:
    """Analyse a stored run across temperatures and roles.

    Args:
        record: The run as stored (``Store.load_run``).
        threshold: The pass threshold; default the run's recorded judge threshold, else 7.
        aggregation: ``mean_with_variance``, ``mean`` or ``majority``; default the run's
            recorded aggregation, else ``mean_with_variance``.
        similarity: ``embeddings`` or ``lexical`` to force a stability method; default
            embeddings when the ``embeddings`` extra is installed, else lexical.

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
    groups: dict[tuple[str, str | None, str, str | None], list[Answer]] = {}
    for a in answers:
        r = a.response
        groups.setdefault((r.candidate, r.role, r.scenario, r.input_id), []).append(a)
    order = suite_order(record)  # scenario, input (file order), role, candidate
    keys = sorted(groups, key=lambda k: order((k[2], k[3], k[1], k[0], 0.0)))

    def metrics(how: str) -> tuple[CellTemperatureMetrics, ...]:
        compare = Similarity(how)
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
        cells = metrics(method)
    except (ImportError, OSError, RuntimeError, ValueError) as exc:
        if method != EMBEDDINGS or similarity == EMBEDDINGS:
            raise
        _log.warning("embedding model unusable (%s): lexical similarity used instead", exc)
        method = LEXICAL
        cells = metrics(method)
    gaps = tuple(role_gaps(answers, roles, candidates, scenarios))
    recommended = _recommended(cells, answers, candidates, aggregation)
    return RunAnalysis(
        cells=cells,
        role_gaps=gaps,
        observations=tuple(_observations(cells, gaps, candidates, answers, aggregation)),
        recommended_temperature=recommended,
        similarity_method=method,
        aggregation=aggregation,
    )


def candidate_curves(analysis: RunAnalysis) -> dict[str, list[tuple[float, float]]]:
    """Per candidate: (temperature, mean score) over its cells, numeric temperatures only,
    in temperature order (each cell's mean at that temperature, averaged)."""
    acc: dict[str, dict[float, list[float]]] = {}
    for cell in analysis.cells:
        per = acc.setdefault(cell.candidate, {})
        for p in cell.points:
            if p.temperature is not None and p.mean is not None:
                per.setdefault(p.temperature, []).append(p.mean)
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
    cells: Sequence[CellTemperatureMetrics],
    answers: Sequence[Answer],
    candidates: Sequence[str],
    aggregation: str,
) -> dict[str, float | None]:
    curves = candidate_curves(RunAnalysis(tuple(cells), (), (), {}, "", aggregation))
    out: dict[str, float | None] = {}
    for cand in candidates:
        points = curves.get(cand, [])
        signal, ceiling = _candidate_ceiling(answers, cand, aggregation)
        if signal:
            points = [] if ceiling is None else [(t, m) for t, m in points if t <= ceiling]
        best = max((m for _t, m in points), default=None)
        out[cand] = next((t for t, m in points if m == best), None)
    return out


def _observations(
    cells: Sequence[CellTemperatureMetrics],
    gaps: Sequence[RoleGap],
    candidates: Sequence[str],
    answers: Sequence[Answer],
    aggregation: str,
) -> list[str]:
    out: list[str] = []
    out.extend(_role_sentences(gaps, candidates))
    curves = candidate_curves(RunAnalysis(tuple(cells), (), (), {}, "", aggregation))
    out.extend(_degrade_sentences(curves, candidates))
    several = len({p.temperature for c in cells for p in c.points}) > 1
    if several and not any(p.mean is not None for c in cells for p in c.points):
        out.append("No answer was scored: only the stability of the answers can be compared")
    elif several:
        for cand in candidates:
            points = curves.get(cand, [])
            if not points:
                out.append(f"{cand} has no scored answer")
            elif len(points) == 1:
                only = format_temperature(points[0][0])
                out.append(f"{cand} was scored at one temperature only ({only}): no trend")
    out.extend(_sensitivity_sentences(cells, candidates))
    for cand in candidates:
        signal, ceiling = _candidate_ceiling(answers, cand, aggregation)
        if signal and ceiling is None:
            out.append(f"{cand} has a safety failure already at its lowest temperature")
        elif signal:
            out.append(f"{cand}: safety holds up to temp {format_temperature(ceiling)}")
    flaky: dict[float | None, int] = {}
    for cell in cells:
        for p in cell.points:
            if p.flaky:
                flaky[p.temperature] = flaky.get(p.temperature, 0) + 1
    for t in sorted(flaky, key=temperature_order):
        n = flaky[t]
        out.append(
            f"{n} {'cell is' if n == 1 else 'cells are'} flaky at temp {format_temperature(t)} "
            "(runs disagree on PASS/FAIL)"
        )
    return out


def _role_sentences(gaps: Sequence[RoleGap], candidates: Sequence[str]) -> list[str]:
    overall = [g for g in gaps if g.scenario is None]
    out: list[str] = []
    for role_a, role_b in dict.fromkeys((g.role_a, g.role_b) for g in overall):
        pair = [g for g in overall if (g.role_a, g.role_b) == (role_a, role_b)]
        clear = [g for g in pair if g.ci_low > 0 or g.ci_high < 0]
        winners = {g.role_a if g.gap > 0 else g.role_b for g in clear}
        if len(pair) > 1 and len(clear) == len(pair) and len(winners) == 1:
            winner = winners.pop()
            loser = role_b if winner == role_a else role_a
            out.append(f"{winner} role consistently outperforms {loser} (every candidate)")
            continue
        for g in pair:
            interval = f"95% CI {g.ci_low:+.1f} to {g.ci_high:+.1f}"
            if g in clear:
                winner, loser = (g.role_a, g.role_b) if g.gap > 0 else (g.role_b, g.role_a)
                where = f"; largest on {g.criteria[0][0]!r}" if g.criteria else ""
                out.append(
                    f"{g.candidate}: {winner} role outperforms {loser} by "
                    f"{abs(g.gap):.1f} points ({interval}){where}"
                )
            else:
                out.append(
                    f"{g.candidate}: no clear difference between {role_a} and {role_b} "
                    f"(gap {g.gap:+.1f}, {interval})"
                )
    return out


def _degrade_sentences(
    curves: Mapping[str, list[tuple[float, float]]], candidates: Sequence[str]
) -> list[str]:
    degrade: dict[str, tuple[float, float, float]] = {}
    with_curve = [c for c in candidates if len(curves.get(c, [])) >= 2]
    for cand in with_curve:
        points = curves[cand]
        base = points[0][1]
        for t, m in points[1:]:
            if m <= base - DEGRADE_POINTS:
                degrade[cand] = (t, base, m)
                break
    temps = {d[0] for d in degrade.values()}
    if len(with_curve) > 1 and len(degrade) == len(with_curve) and len(temps) == 1:
        return [f"All candidates degrade at temp {format_temperature(temps.pop())}"]
    out = []
    for cand in with_curve:
        if cand in degrade:
            t, base, m = degrade[cand]
            out.append(f"{cand} degrades at temp {format_temperature(t)} ({base:.1f} -> {m:.1f})")
        else:
            means = [m for _t, m in curves[cand]]
            out.append(
                f"{cand} holds its score across temperatures ({min(means):.1f} to {max(means):.1f})"
            )
    return out


def _sensitivity_sentences(
    cells: Sequence[CellTemperatureMetrics], candidates: Sequence[str]
) -> list[str]:
    acc: dict[str, list[float]] = {}
    for cell in cells:
        if cell.sensitivity is not None:
            acc.setdefault(cell.candidate, []).append(cell.sensitivity)
    means = {c: statistics.fmean(acc[c]) for c in candidates if c in acc}
    if len(means) < 2:
        return []
    ranked = sorted(means, key=lambda c: -means[c])
    most, least = ranked[0], ranked[-1]
    if means[most] == means[least]:
        return [f"All candidates are equally temperature-sensitive (variance {means[most]:.2f})"]
    if len(ranked) == 2:
        return [
            f"{most} shows more temperature sensitivity than {least} "
            f"(variance {means[most]:.2f} vs {means[least]:.2f})"
        ]
    return [
        f"{most} is the most temperature-sensitive (variance {means[most]:.2f}); "
        f"{least} the least ({means[least]:.2f})"
    ]


def _plain(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def analysis_to_dict(analysis: RunAnalysis) -> dict[str, Any]:
    """The analysis as JSON-ready data (the ``analysis`` object of the results file): the
    dataclasses' fields, tuples as lists (a criterion gap as ``[name, gap]``)."""
    import dataclasses

    data: dict[str, Any] = _plain(dataclasses.asdict(analysis))
    return data
