"""``qualspec trend``: accuracy across more than two runs (prompt v1, v2, v3, ...), oldest
first, overall and per model, each with its n and 95% interval, and the change between
consecutive runs with the confidence of :func:`~qualspec.analysis.compare_runs`.

What is measured is what ``compare`` pairs (see :mod:`qualspec.analysis._compare`): the
**units** of a run, one per (candidate, role, scenario, input, temperature, aspect), each
the mean over run indexes of a field's accuracy 0-100 (when every run has field grades) or
of a criterion's score 0-10 (otherwise). Per run:

* ``mean`` of its units, with ``n`` (units) and a 95% percentile bootstrap interval
  (seeded by the run id; none for fewer than :data:`MIN_UNITS_FOR_CI` units: one value is
  not an interval);
* per model, the same over that model's units;
* the run's calls: tokens and cost (every kind of call), so cost is followed with accuracy.

Between consecutive runs, and from the first to the last: the **paired** comparison of the
units both runs scored (mean difference, 95% interval, p, verdict ``improved`` /
``regressed`` / ``no detectable change``), exactly as ``qualspec compare`` computes it. A
run whose criteria judge failed calibration (``judge_calibration`` in its metadata) has its
scores shown as not meaningful, and no change involving it gets a verdict.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from qualspec.analysis._bootstrap import bootstrap_ci
from qualspec.analysis._compare import CompareSource, UnitKey, unit_values
from qualspec.analysis._stats import PairedComparison, compare_paired, stat_seed
from qualspec.store import RunRecord

__all__ = [
    "MIN_UNITS_FOR_CI",
    "TREND_SCHEMA_VERSION",
    "RunTrend",
    "TrendChange",
    "TrendLevel",
    "TrendPoint",
    "format_trend",
    "run_trend",
    "trend_to_dict",
]

TREND_SCHEMA_VERSION = "1.0"
MIN_UNITS_FOR_CI = 2
"""Fewer units than this get no interval (a bootstrap of one value is that value)."""
NOT_MEANINGFUL = "not meaningful: judge failed calibration"


@dataclass(frozen=True, slots=True)
class TrendLevel:
    """The mean of some units of one run, with n and its 95% interval (None below
    :data:`MIN_UNITS_FOR_CI` units; mean None with no unit)."""

    n: int
    mean: float | None
    ci_low: float | None
    ci_high: float | None


@dataclass(frozen=True, slots=True)
class TrendChange:
    """From one run to another: the paired comparison of the units both scored (None when
    they share none, or when either run's judge failed calibration: ``reason`` says why)."""

    run_a: str
    run_b: str
    comparison: PairedComparison | None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class TrendPoint:
    """One run of the trend: its level overall and per model, and what its calls cost."""

    run_id: str
    suite: str
    status: str
    started_at: datetime | None
    overall: TrendLevel
    by_model: dict[str, TrendLevel]
    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    meaningful: bool = True  # False: its criteria judge failed calibration
    # the candidates' prompt parts and their versions (known when read from a store)
    prompt_versions: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RunTrend:
    """Runs oldest first, the changes between consecutive runs (overall and per model),
    and from the first run to the last."""

    source: CompareSource
    scale: int
    points: list[TrendPoint]
    changes: list[TrendChange]
    model_changes: dict[str, list[TrendChange]]
    first_to_last: TrendChange | None
    models: list[str] = field(default_factory=list)

    @property
    def has_regression(self) -> bool:
        """Some overall change between consecutive runs is ``regressed``."""
        return any(
            c.comparison is not None and c.comparison.verdict == "regressed" for c in self.changes
        )


def _level(values: Sequence[float], seed_names: tuple[str, ...]) -> TrendLevel:
    if not values:
        return TrendLevel(0, None, None, None)
    mean = statistics.fmean(values)
    if len(values) < MIN_UNITS_FOR_CI:
        return TrendLevel(len(values), mean, None, None)
    low, high = bootstrap_ci(sorted(values), stat_seed(*seed_names))
    return TrendLevel(len(values), mean, low, high)


def _meaningful(run: RunRecord, source: CompareSource) -> bool:
    if source != "criteria":
        return True
    found = (run.summary.metadata or {}).get("judge_calibration")
    if not isinstance(found, dict):
        return True
    return not any(isinstance(m, dict) and m.get("meaningful") is False for m in found.values())


def _change(
    a: TrendPoint,
    b: TrendPoint,
    units_a: dict[UnitKey, float],
    units_b: dict[UnitKey, float],
    scope: str,
) -> TrendChange:
    if not (a.meaningful and b.meaningful):
        return TrendChange(a.run_id, b.run_id, None, NOT_MEANINGFUL)
    pairs = [(x, units_b[k]) for k, x in units_a.items() if k in units_b]
    if not pairs:
        return TrendChange(a.run_id, b.run_id, None, "nothing scored in both runs")
    xs, ys = zip(*pairs, strict=True)
    seed = stat_seed(a.run_id, b.run_id, "trend", scope)
    return TrendChange(a.run_id, b.run_id, compare_paired(xs, ys, seed=seed))


def _versions(run: RunRecord, prompts: Mapping[int, tuple[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in run.responses:
        if r.kind != "candidate":
            continue
        for version_id in r.prompt_versions.values():
            found = prompts.get(version_id)
            if found is not None:
                out[found[0]] = max(found[1], out.get(found[0], 0))
    return dict(sorted(out.items()))


def run_trend(
    runs: Sequence[RunRecord], prompts: Mapping[int, tuple[str, int]] | None = None
) -> RunTrend:
    """The trend of ``runs``, given oldest first; ``prompts`` (prompt version id ->
    (name, version), ``qualspec.report.prompt_refs``) names each run's prompt versions.

    Raises:
        ValueError: Fewer than two runs.

    Example:
        >>> trend = run_trend([store.load_run(r) for r in (v1, v2, v3)])
        >>> [p.overall.mean for p in trend.points], trend.changes[-1].comparison.verdict
    """
    from qualspec.analysis._aggregate import run_totals
    from qualspec.judges import is_field_grade

    if len(runs) < 2:
        raise ValueError("a trend needs at least two runs")
    graded = all(any(is_field_grade(j) for j in r.judgments) for r in runs)
    source: CompareSource = "field_grades" if graded else "criteria"
    units = [unit_values(r, source) for r in runs]
    models = list(dict.fromkeys(k[0] for u in units for k in u))
    points = []
    for run, found in zip(runs, units, strict=True):
        rid = run.summary.id
        totals = run_totals(run)
        points.append(
            TrendPoint(
                run_id=rid,
                suite=run.summary.suite_name,
                status=run.summary.status,
                started_at=run.summary.started_at,
                overall=_level(list(found.values()), (rid, "trend")),
                by_model={
                    m: _level([v for k, v in found.items() if k[0] == m], (rid, "trend", m))
                    for m in models
                },
                # an all-criteria judge call writes one record per criterion: calls by key
                calls=len(run.responses) + len({j.judge_key for j in run.judgments if j.judge_key}),
                input_tokens=totals.candidate_input_tokens + totals.judge_input_tokens,
                output_tokens=totals.candidate_output_tokens + totals.judge_output_tokens,
                cost_usd=totals.cost_usd,
                meaningful=_meaningful(run, source),
                prompt_versions=_versions(run, prompts or {}),
            )
        )

    def only(model: str, found: dict[UnitKey, float]) -> dict[UnitKey, float]:
        return {k: v for k, v in found.items() if k[0] == model}

    steps = list(zip(points, units, strict=True))
    changes = [
        _change(a, b, ua, ub, "overall") for (a, ua), (b, ub) in zip(steps, steps[1:], strict=False)
    ]
    model_changes = {
        m: [
            _change(a, b, only(m, ua), only(m, ub), m)
            for (a, ua), (b, ub) in zip(steps, steps[1:], strict=False)
        ]
        for m in models
    }
    first_to_last = (
        _change(points[0], points[-1], units[0], units[-1], "first-to-last")
        if len(points) > 2
        else None
    )
    return RunTrend(
        source=source,
        scale=100 if source == "field_grades" else 10,
        points=points,
        changes=changes,
        model_changes=model_changes,
        first_to_last=first_to_last,
        models=models,
    )


# ----------------------------------------------------------------------------- output


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _level_text(level: TrendLevel, meaningful: bool = True) -> str:
    if not meaningful:
        return NOT_MEANINGFUL
    if level.mean is None:
        return "nothing scored"
    ci = (
        f"[{_num(level.ci_low)}, {_num(level.ci_high)}]"
        if level.ci_low is not None
        else f"(no interval: n < {MIN_UNITS_FOR_CI})"
    )
    return f"{_num(level.mean)}  n={level.n}  95% CI {ci}"


def _change_text(change: TrendChange) -> str:
    c = change.comparison
    if c is None:
        return f"- ({change.reason})"
    p = "<0.001" if c.p_value < 0.001 else f"{c.p_value:.3f}"
    return (
        f"{c.difference:+.1f}  95% CI [{c.ci_low:+.1f}, {c.ci_high:+.1f}]  p {p}  "
        f"{c.n} pairs  {c.verdict}"
    )


def _cost(point: TrendPoint) -> str:
    money = "price unknown" if point.cost_usd is None else f"${point.cost_usd:.4f}"
    return f"{point.input_tokens} in / {point.output_tokens} out tokens, {money}"


def format_trend(trend: RunTrend, fmt: str = "text") -> str:
    """The trend as ``text`` or ``json`` (:func:`trend_to_dict`)."""
    if fmt == "json":
        import json

        return json.dumps(trend_to_dict(trend), indent=2) + "\n"
    what = (
        "field accuracy 0-100; n = fields graded, answer x field"
        if trend.source == "field_grades"
        else "criteria score 0-10; n = criteria scored, answer x criterion"
    )
    lines = [f"Trend of {len(trend.points)} runs, oldest first ({what}, repeats averaged)"]
    width = max(len(p.run_id) for p in trend.points)
    # the prompt parts whose version differs between the runs: what changed
    parts = sorted({part for p in trend.points for part in p.prompt_versions})
    changed = [
        part for part in parts if len({p.prompt_versions.get(part) for p in trend.points}) > 1
    ]
    for index, p in enumerate(trend.points, 1):
        started = p.started_at.strftime("%Y-%m-%d %H:%M") if p.started_at else "-"
        versions = ", ".join(
            f"{part} v{p.prompt_versions[part]}" for part in changed if part in p.prompt_versions
        )
        lines.append(
            f"  {index}. {p.run_id:<{width}}  {started}  {_level_text(p.overall, p.meaningful)}"
            f"  ({p.suite}, {p.status}; {_cost(p)}{'; ' + versions if versions else ''})"
        )
    lines.append("Change between consecutive runs (paired over the units both scored):")
    for index, change in enumerate(trend.changes, 1):
        lines.append(f"  {index} -> {index + 1}: {_change_text(change)}")
    if trend.first_to_last is not None:
        lines.append(f"  first -> last: {_change_text(trend.first_to_last)}")
    for model in trend.models:
        lines.append(f"Model {model}:")
        for index, p in enumerate(trend.points, 1):
            lines.append(f"  {index}. {_level_text(p.by_model[model], p.meaningful)}")
        for index, change in enumerate(trend.model_changes[model], 1):
            lines.append(f"  {index} -> {index + 1}: {_change_text(change)}")
    regressed = [
        f"{i} -> {i + 1}"
        for i, c in enumerate(trend.changes, 1)
        if c.comparison is not None and c.comparison.verdict == "regressed"
    ]
    lines.append(
        f"Regression: {', '.join(regressed)}" if regressed else "Regression: none detected"
    )
    return "\n".join(lines) + "\n"


def _level_dict(level: TrendLevel) -> dict[str, Any]:
    return {"n": level.n, "mean": level.mean, "ci_low": level.ci_low, "ci_high": level.ci_high}


def _change_dict(change: TrendChange) -> dict[str, Any]:
    c = change.comparison
    out: dict[str, Any] = {"run_a": change.run_a, "run_b": change.run_b, "reason": change.reason}
    if c is None:
        return {**out, "n": 0, "difference": None, "verdict": None}
    return {
        **out,
        "n": c.n,
        "mean_a": c.mean_a,
        "mean_b": c.mean_b,
        "difference": c.difference,
        "ci_low": c.ci_low,
        "ci_high": c.ci_high,
        "p_value": c.p_value,
        "effect_size": c.effect_size,
        "verdict": c.verdict,
    }


def trend_to_dict(trend: RunTrend) -> dict[str, Any]:
    """The trend as plain JSON data (``schema_version`` :data:`TREND_SCHEMA_VERSION`)."""
    return {
        "schema_version": TREND_SCHEMA_VERSION,
        "source": trend.source,
        "scale": trend.scale,
        "runs": [
            {
                "run_id": p.run_id,
                "suite": p.suite,
                "status": p.status,
                "started_at": p.started_at.isoformat() if p.started_at else None,
                "meaningful": p.meaningful,
                **_level_dict(p.overall),
                "by_model": {m: _level_dict(level) for m, level in p.by_model.items()},
                "calls": p.calls,
                "input_tokens": p.input_tokens,
                "output_tokens": p.output_tokens,
                "cost_usd": p.cost_usd,
                "prompt_versions": p.prompt_versions,
            }
            for p in trend.points
        ],
        "changes": [_change_dict(c) for c in trend.changes],
        "by_model": {m: [_change_dict(c) for c in cs] for m, cs in trend.model_changes.items()},
        "first_to_last": None if trend.first_to_last is None else _change_dict(trend.first_to_last),
        "has_regression": trend.has_regression,
    }
