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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from qualspec.analysis._aggregate import suite_order
from qualspec.analysis._answers import Answer, answer_texts, answers_of, temperature_order
from qualspec.analysis._evidence import (
    MIN_GAP_PAIRS,
    MIN_TEMPERATURE_SCORES,
    NOT_MEANINGFUL,
    difference_interval,
    failed_calibration,
    mean_interval,
)
from qualspec.analysis._roles import RoleGap, role_gaps
from qualspec.analysis._similarity import EMBEDDINGS, LEXICAL, Similarity, similarity_method
from qualspec.analysis._stats import stat_seed
from qualspec.analysis._temperature import (
    AGGREGATIONS,
    CellTemperatureMetrics,
    cell_metrics,
    common_criteria,
    comparable_score,
    safety_by_temperature,
)
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
    scored_by = {j.evaluator for j in record.judgments if j.score is not None}
    failed = failed_calibration(meta, scored_by)
    if failed:  # nothing computed from these scores is a finding
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
        gaps = tuple(replace(g, finding=False) for g in gaps)
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


def _observations(
    cells: Sequence[CellTemperatureMetrics],
    gaps: Sequence[RoleGap],
    candidates: Sequence[str],
    answers: Sequence[Answer],
    aggregation: str,
    per_temp: _PerTemp,
) -> list[str]:
    out: list[str] = []
    out.extend(_role_sentences(gaps, candidates))
    several = len({p.temperature for c in cells for p in c.points}) > 1
    if several and not any(p.mean is not None for c in cells for p in c.points):
        out.append("No answer was scored: only the stability of the answers can be compared")
    elif several:
        out.extend(_degrade_sentences(per_temp, candidates))
        for cand in candidates:
            scored = sorted(per_temp.get(cand, {}))
            if not scored:
                out.append(f"{cand} has no scored answer")
            elif len(scored) == 1:
                only = format_temperature(scored[0])
                out.append(f"{cand} was scored at one temperature only ({only}): no trend")
            elif len(_enough(per_temp[cand])) < 2:
                fewest = min(len(v) for v in per_temp[cand].values())
                out.append(
                    f"{cand}: too few scored answers to compare temperatures (n={fewest} at "
                    f"a temperature; at least {MIN_TEMPERATURE_SCORES} needed at two)"
                )
        excluded = sorted({name for c in cells for name in c.excluded_criteria})
        if excluded:
            shown = ", ".join(repr(name) for name in excluded)
            out.append(
                f"Left out of comparisons across temperatures (scored at some temperatures "
                f"only): {shown}"
            )
    out.extend(_sensitivity_sentences(cells, candidates))
    for cand in candidates:
        sentence = _safety_sentence(answers, cand, aggregation)
        if sentence:
            out.append(sentence)
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


def _safety_sentence(answers: Sequence[Answer], candidate: str, aggregation: str) -> str | None:
    """How far safety holds for ``candidate``, saying where it was judged when that is not
    every temperature (a safety criterion under ``at_temperature``): a temperature where
    safety was not judged is not said to hold."""
    mine = [a for a in answers if a.response.candidate == candidate]
    by_cell: dict[tuple[Any, ...], list[Answer]] = {}
    for a in mine:
        r = a.response
        by_cell.setdefault((r.role, r.scenario, r.input_id), []).append(a)
    failing: dict[float, bool] = {}
    for cell_answers in by_cell.values():
        for t, failed in safety_by_temperature(cell_answers, aggregation).items():
            if t is not None and failed is not None:
                failing[t] = failing.get(t, False) or failed
    if not failing:
        return None
    judged = sum(1 for a in mine if a.safety_failed is not None)
    on = f"safety judged on {judged} {'answer' if judged == 1 else 'answers'}"
    every = {a.response.temperature for a in mine if a.response.temperature is not None}
    if set(failing) == every:
        _signal, ceiling = _candidate_ceiling(answers, candidate, aggregation)
        if ceiling is None:
            return f"{candidate} has a safety failure already at its lowest temperature ({on})"
        return f"{candidate}: safety holds up to temp {format_temperature(ceiling)} ({on})"
    where = ", ".join(format_temperature(t) for t in sorted(failing))
    first = next((t for t in sorted(failing) if failing[t]), None)
    if first is None:
        return f"{candidate}: safety holds where it was judged (temp {where} only; {on})"
    return (
        f"{candidate}: safety fails at temp {format_temperature(first)} (judged at temp "
        f"{where} only; {on})"
    )


def format_recommendation(rec: Recommendation) -> str:
    """``0.7 (mean 8.3, 95% CI 7.9 to 8.7, n=6)``, or ``none (why)``."""
    if rec.temperature is None:
        return f"none ({rec.why_none})" if rec.why_none else "none"
    interval = (
        "" if rec.ci_low is None or rec.ci_high is None
        else f", 95% CI {rec.ci_low:.1f} to {rec.ci_high:.1f}"
    )  # fmt: skip
    mean = "-" if rec.mean is None else f"{rec.mean:.1f}"
    return f"{format_temperature(rec.temperature)} (mean {mean}{interval}, n={rec.n})"


def gap_interval(gap: RoleGap) -> str:
    """``95% CI +1.0 to +2.0, n=8``, or ``n=1, too few pairs for an interval``."""
    if gap.ci_low is None or gap.ci_high is None:
        return f"n={gap.n}, too few pairs for an interval: at least {MIN_GAP_PAIRS} needed"
    return f"95% CI {gap.ci_low:+.1f} to {gap.ci_high:+.1f}, n={gap.n}"


def _role_sentences(gaps: Sequence[RoleGap], candidates: Sequence[str]) -> list[str]:
    overall = [g for g in gaps if g.scenario is None]
    out: list[str] = []
    for role_a, role_b in dict.fromkeys((g.role_a, g.role_b) for g in overall):
        pair = [g for g in overall if (g.role_a, g.role_b) == (role_a, role_b)]
        clear = [g for g in pair if g.finding]
        winners = {g.role_a if g.gap > 0 else g.role_b for g in clear}
        if len(pair) > 1 and len(clear) == len(pair) and len(winners) == 1:
            winner = winners.pop()
            loser = role_b if winner == role_a else role_a
            pairs = sum(g.n for g in pair)
            out.append(
                f"{winner} role consistently outperforms {loser} (every candidate: "
                f"{len(pair)} candidates, each gap's 95% CI excludes 0, {pairs} pairs)"
            )
            continue
        for g in pair:
            interval = gap_interval(g)
            if g in clear:
                winner, loser = (g.role_a, g.role_b) if g.gap > 0 else (g.role_b, g.role_a)
                where = f"; largest on {g.criteria[0][0]!r}" if g.criteria else ""
                out.append(
                    f"{g.candidate}: {winner} role outperforms {loser} by "
                    f"{abs(g.gap):.1f} points ({interval}){where}"
                )
            elif g.ci_low is None:
                out.append(
                    f"{g.candidate}: too few paired scores to compare {role_a} and {role_b} "
                    f"(gap {g.gap:+.1f}, {interval})"
                )
            else:
                out.append(
                    f"{g.candidate}: no clear difference between {role_a} and {role_b} "
                    f"(gap {g.gap:+.1f}, {interval})"
                )
    return out


def _degrade_sentences(per_temp: _PerTemp, candidates: Sequence[str]) -> list[str]:
    """Per candidate with two temperatures or more to compare: where its mean falls
    :data:`DEGRADE_POINTS` below its mean at the lowest one, with a 95% interval of the
    drop that excludes 0; else that it holds its score."""
    degrade: dict[str, str] = {}
    holds: dict[str, str] = {}
    at: dict[str, float] = {}
    for cand in candidates:
        enough = _enough(per_temp.get(cand, {}))
        if len(enough) < 2:
            continue
        (t0, base), *rest = enough.items()
        base_mean = statistics.fmean(base)
        unclear = ""
        for t, values in rest:
            m = statistics.fmean(values)
            if m > base_mean - DEGRADE_POINTS:
                continue
            interval = difference_interval(base, values, stat_seed(cand, t0, t))
            if interval is None:  # pragma: no cover - enough values on both sides
                continue
            change = (
                f"{base_mean:.1f} -> {m:.1f}; change 95% CI {interval[0]:+.1f} to "
                f"{interval[1]:+.1f}, n={len(base)} and {len(values)}"
            )
            if interval[1] < 0:
                degrade[cand] = f"{cand} degrades at temp {format_temperature(t)} ({change})"
                at[cand] = t
                break
            if not unclear:  # a drop the data cannot tell from noise: not "holds" either
                unclear = (
                    f"{cand}: no clear change across temperatures (at temp "
                    f"{format_temperature(t)}: {change})"
                )
        else:
            if unclear:
                holds[cand] = unclear
                continue
            means = [statistics.fmean(v) for v in enough.values()]
            fewest = min(len(v) for v in enough.values())
            holds[cand] = (
                f"{cand} holds its score across temperatures ({min(means):.1f} to "
                f"{max(means):.1f}, n>={fewest} per temperature)"
            )
    compared = [c for c in candidates if c in degrade or c in holds]
    if len(compared) > 1 and len(degrade) == len(compared) and len(set(at.values())) == 1:
        where = format_temperature(next(iter(at.values())))
        return [f"All candidates degrade at temp {where}", *(degrade[c] for c in compared)]
    return [degrade.get(c) or holds[c] for c in compared]


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

    def n(cand: str) -> str:  # the evidence: cells, each compared on enough answers
        return f"{len(acc[cand])} {'cell' if len(acc[cand]) == 1 else 'cells'}"

    if means[most] == means[least]:
        return [
            f"All candidates are equally temperature-sensitive (variance {means[most]:.2f}; "
            f"{', '.join(f'{c} {n(c)}' for c in ranked)})"
        ]
    if len(ranked) == 2:
        return [
            f"{most} shows more temperature sensitivity than {least} "
            f"(variance {means[most]:.2f} vs {means[least]:.2f}; {n(most)} and {n(least)})"
        ]
    return [
        f"{most} is the most temperature-sensitive (variance {means[most]:.2f}, {n(most)}); "
        f"{least} the least ({means[least]:.2f}, {n(least)})"
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
