"""Aggregation of field grades (reference-graded testing): overall, per model, per input
(difficulty and variance), per field (the most problematic first), and cost per suite
split into agent, reference and grading calls."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from qualspec.store import JudgmentRecord, ResponseRecord, RunRecord

__all__ = [
    "CallCost",
    "FieldAnalysis",
    "FieldStats",
    "GradeGroup",
    "field_analysis",
    "field_analysis_to_dict",
    "suite_costs",
]


@dataclass(frozen=True, slots=True)
class GradeGroup:
    """Field grades of a set of answers (a model, an input, the run).

    ``mean`` is the mean of the answers' weighted means (``score``), ``simple_mean`` the
    mean of their simple means; ``variance`` the population variance of the scores (how
    much the answers of an input disagree); ``pass_rate`` and ``field_pass_rate`` are
    percents. ``n_unscored`` answers could not be graded (not in the means).
    """

    n: int
    n_unscored: int
    mean: float | None
    simple_mean: float | None
    variance: float | None
    pass_rate: float | None
    field_pass_rate: float | None
    band: str | None


@dataclass(frozen=True, slots=True)
class FieldStats:
    """One field over a run: mean accuracy, pass rate (percent), match counts."""

    scenario: str
    name: str
    n: int
    mean: float | None
    pass_rate: float | None
    critical: bool
    weight: float
    matches: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FieldAnalysis:
    """The field grades of one run, aggregated."""

    evaluator: str
    threshold: float
    overall: GradeGroup
    by_model: dict[str, GradeGroup]
    # (scenario, input id) -> grades, hardest (lowest mean) first
    by_input: dict[tuple[str, str | None], GradeGroup]
    # the most problematic field first (lowest mean accuracy)
    fields: list[FieldStats]
    flags: dict[str, int]
    errors: int = 0  # grading calls that failed (error records, graded again on resume)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _group(records: Sequence[JudgmentRecord], threshold: float) -> GradeGroup:
    from qualspec.judges import band

    scores = [j.score for j in records if j.score is not None]
    simple = [_number(j, "simple_mean") for j in records]
    rates = [_number(j, "field_pass_rate") for j in records]
    mean = _mean(scores)
    return GradeGroup(
        n=len(records),
        n_unscored=len(records) - len(scores),
        mean=mean,
        simple_mean=_mean([s for s in simple if s is not None]),
        variance=statistics.pvariance(scores) if len(scores) > 1 else (0.0 if scores else None),
        pass_rate=100.0 * sum(1 for s in scores if s >= threshold) / len(scores)
        if scores
        else None,
        field_pass_rate=_mean([r for r in rates if r is not None]),
        band=band(mean),
    )


def _number(record: JudgmentRecord, key: str) -> float | None:
    value = (record.details or {}).get(key)
    return float(value) if isinstance(value, int | float) else None


def field_analysis(run: RunRecord, evaluator: str | None = None) -> FieldAnalysis | None:
    """The run's field grades aggregated, or None when it has none.

    Args:
        run: The run as stored.
        evaluator: Which field grader (default: the first whose records the run holds).

    Example:
        >>> fa = field_analysis(run)
        >>> fa.overall.mean, fa.overall.band, fa.fields[0].name   # the worst field
    """
    from qualspec.judges import is_field_grade

    every = [j for j in run.judgments if is_field_grade(j)]
    if evaluator is None and every:
        evaluator = every[0].evaluator
    every = [j for j in every if j.evaluator == evaluator]
    records = [j for j in every if j.error is None]  # a failed grading call has no grades
    if not every or evaluator is None:
        return None
    threshold = next((j.threshold for j in records if j.threshold is not None), 80.0)
    responses = {r.key: r for r in run.responses}
    by_model: dict[str, list[JudgmentRecord]] = {}
    by_input: dict[tuple[str, str | None], list[JudgmentRecord]] = {}
    for j in records:
        response = responses.get(j.response_key)
        if response is None:
            continue
        by_model.setdefault(response.candidate, []).append(j)
        by_input.setdefault((response.scenario, response.input_id), []).append(j)
    inputs = {k: _group(v, threshold) for k, v in by_input.items()}
    hardest = sorted(inputs, key=lambda k: (inputs[k].mean is None, inputs[k].mean or 0.0))
    flags: dict[str, int] = {}
    for j in every:
        for flag in (j.details or {}).get("flags") or ():
            flags[str(flag)] = flags.get(str(flag), 0) + 1
    return FieldAnalysis(
        evaluator=evaluator,
        threshold=threshold,
        overall=_group(records, threshold),
        by_model={k: _group(v, threshold) for k, v in sorted(by_model.items())},
        by_input={k: inputs[k] for k in hardest},
        fields=_fields(records, responses, threshold),
        flags=dict(sorted(flags.items())),
        errors=len(every) - len(records),
    )


def _fields(
    records: Iterable[JudgmentRecord], responses: Mapping[str, ResponseRecord], threshold: float
) -> list[FieldStats]:
    found: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for j in records:
        response = responses.get(j.response_key)
        scenario = response.scenario if response is not None else ""
        for name, entry in ((j.details or {}).get("fields") or {}).items():
            if isinstance(entry, Mapping):
                found.setdefault((scenario, str(name)), []).append(entry)
    out: list[FieldStats] = []
    for (scenario, name), entries in found.items():
        values = [
            float(e["accuracy"]) for e in entries if isinstance(e.get("accuracy"), int | float)
        ]
        matches: dict[str, int] = {}
        for e in entries:
            matches[str(e.get("match"))] = matches.get(str(e.get("match")), 0) + 1
        out.append(
            FieldStats(
                scenario=scenario,
                name=name,
                n=len(values),
                mean=_mean(values),
                pass_rate=100.0 * sum(1 for v in values if v >= threshold) / len(values)
                if values
                else None,
                critical=bool(entries[0].get("critical")),
                weight=float(entries[0].get("weight") or 1.0),
                matches=dict(sorted(matches.items())),
            )
        )
    out.sort(key=lambda f: (f.mean is None, f.mean if f.mean is not None else 0.0, f.name))
    return out


@dataclass(frozen=True, slots=True)
class CallCost:
    """Calls of one kind (agent, reference, grading): how many, how many came from the
    cache (costing nothing), tokens, and cost (None when a price is unknown)."""

    calls: int
    cached: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None


def _cost_of(records: Sequence[ResponseRecord | JudgmentRecord]) -> CallCost:
    # a field grade decided by rules alone made no call (no judge key): it costs nothing
    records = [r for r in records if not isinstance(r, JudgmentRecord) or r.judge_key]
    cost: float | None = 0.0
    for r in records:
        if r.error is None and not r.cached and r.cost_usd is None:
            if isinstance(r, JudgmentRecord) and r.judge_model is None:
                continue
            cost = None
        elif cost is not None:
            cost += r.cost_usd or 0.0
    return CallCost(
        calls=len(records),
        cached=sum(1 for r in records if r.cached),
        input_tokens=sum(r.input_tokens or 0 for r in records),
        output_tokens=sum(r.output_tokens or 0 for r in records),
        cost_usd=cost,
    )


def suite_costs(run: RunRecord) -> dict[str, CallCost]:
    """Tokens and cost of a run's ``agent`` (candidate), ``reference`` and ``grading``
    (field grader) calls. A cached call counts its tokens but costs nothing (saved)."""
    from qualspec.judges import is_field_grade

    return {
        "agent": _cost_of([r for r in run.responses if r.kind == "candidate"]),
        "reference": _cost_of([r for r in run.responses if r.kind == "reference"]),
        "grading": _cost_of([j for j in run.judgments if is_field_grade(j)]),
    }


def _group_dict(group: GradeGroup) -> dict[str, Any]:
    return {
        "n": group.n,
        "unscored": group.n_unscored,
        "mean": group.mean,
        "simple_mean": group.simple_mean,
        "variance": group.variance,
        "pass_rate": group.pass_rate,
        "field_pass_rate": group.field_pass_rate,
        "band": group.band,
    }


def field_analysis_to_dict(analysis: FieldAnalysis, run: RunRecord | None = None) -> dict[str, Any]:
    """The analysis as plain JSON data (the results file's ``field_grades``)."""
    out: dict[str, Any] = {
        "evaluator": analysis.evaluator,
        "threshold": analysis.threshold,
        "overall": _group_dict(analysis.overall),
        "by_model": {k: _group_dict(v) for k, v in analysis.by_model.items()},
        "by_input": [
            {"scenario": s, "input_id": i, "difficulty": g.mean, **_group_dict(g)}
            for (s, i), g in analysis.by_input.items()
        ],
        "fields": [
            {
                "scenario": f.scenario,
                "field": f.name,
                "n": f.n,
                "mean": f.mean,
                "pass_rate": f.pass_rate,
                "critical": f.critical,
                "weight": f.weight,
                "matches": f.matches,
            }
            for f in analysis.fields
        ],
        "flags": analysis.flags,
        "errors": analysis.errors,
    }
    if run is not None:
        out["costs"] = {
            kind: {
                "calls": c.calls,
                "cached": c.cached,
                "input_tokens": c.input_tokens,
                "output_tokens": c.output_tokens,
                "cost_usd": c.cost_usd,
            }
            for kind, c in suite_costs(run).items()
        }
    return out
