"""``qualspec insights``: what to fix next in a run, each recommendation with its evidence.

The patterns (those of "Interpreting results" in the reference-grading design), read from
the run's **field grades** (accuracy 0-100 per field) or, in a run without them, its
**criteria judgments** (0-10 per criterion) - the units of :mod:`._compare`. Numbers are on
the run's own scale; "points" below are of 100 (field grades) and scale to 10 (criteria).

``low_accuracy``
    the mean answer score is below 70% of the scale (the band "Needs improvement"):
    a fundamental prompt problem, or a wrong reference.
``failing_field``
    a field (criterion) below the pass threshold in every answer graded on it (at least
    :data:`MIN_ANSWERS`): add field-specific instructions and examples.
``model_specific``
    a candidate whose mean is at least :data:`GAP_POINTS` below the mean of the other
    candidates (its worst fields cited), or a field a candidate fails in every answer while
    the other candidates pass it on average: a model-specific prompt variant may be
    needed.
``hard_input``
    an input whose mean is at least :data:`GAP_POINTS` below the mean of the other inputs:
    find out what makes it hard. Its spread over candidates and worst fields are cited.
``output_format``
    a candidate whose answers were flagged malformed JSON or refusals (field grades only).
``inconsistent_grading``
    a recorded ``qualspec grader-check`` of the run flagged items whose scores spread more
    than its limit: the grading prompt is too subjective.
``reference_changed``
    given a ``baseline`` run (``qualspec insights`` takes the previous run of the same
    suite), the inputs the two runs graded against different references
    (:func:`~qualspec.analysis.reference_changes`): "reference changed for N inputs", and
    how many of them lost a person's review to a prompt change.
``judges_disagree``
    a judge panel's criteria whose Krippendorff's alpha is below 0.667 (too little
    agreement between the judges for even tentative conclusions).
"""

from __future__ import annotations

import statistics
from typing import Any

from qualspec.analysis._compare import CompareSource, unit_values
from qualspec.analysis._diff_format import DiffFormat, render_as
from qualspec.analysis._insight_rules import (
    GAP_POINTS,
    MIN_ANSWERS,
    Insight,
    InsightKind,
    RunInsights,
    _answer_scores,
    _failing_fields,
    _fmt,
    _hard_inputs,
    _inconsistent,
    _low_accuracy,
    _model_fields,
    _model_specific,
    _output_format,
    _reference_changed,
    _thresholds,
)
from qualspec.analysis._judge_agreement import agreement_insights
from qualspec.store import RunRecord

__all__ = [
    "GAP_POINTS",
    "MIN_ANSWERS",
    "Insight",
    "InsightKind",
    "RunInsights",
    "format_insights",
    "insights_to_dict",
    "run_insights",
]


def run_insights(run: RunRecord, baseline: RunRecord | None = None) -> RunInsights:
    """The recommendations for ``run`` (see the module docstring), most severe first;
    ``baseline`` (an earlier run of the suite) adds ``reference_changed``.

    Example:
        >>> for insight in run_insights(store.load_run(run_id)).insights:
        ...     print(insight.finding, insight.action, *insight.evidence)
    """
    from qualspec.judges import is_field_grade

    source: CompareSource = (
        "field_grades" if any(is_field_grade(j) for j in run.judgments) else "criteria"
    )
    scale = 100 if source == "field_grades" else 10
    noun = "field" if source == "field_grades" else "criterion"
    units = unit_values(run, source)
    answers = _answer_scores(run, source)
    mean = statistics.fmean(answers.values()) if answers else None
    found: list[Insight] = []
    if mean is not None:
        found += _low_accuracy(mean, len(answers), scale, run)
    found += _output_format(run)
    found += _failing_fields(units, _thresholds(run, source), scale, noun)
    found += _model_specific(units, scale, noun)
    found += _model_fields(units, _thresholds(run, source), scale, noun)
    found += _hard_inputs(units, scale, noun)
    found += _inconsistent(run)
    found += _reference_changed(run, baseline)
    found += agreement_insights(run)
    found.sort(key=lambda i: 0 if i.severity == "high" else 1)  # stable: pattern order kept
    return RunInsights(
        run_id=run.summary.id,
        suite=run.summary.suite_name,
        source=source,
        scale=scale,
        mean=mean,
        answers=len(answers),
        insights=tuple(found),
    )


def insights_to_dict(result: RunInsights) -> dict[str, Any]:
    """The insights as JSON-ready data."""
    return {
        "run_id": result.run_id,
        "suite": result.suite,
        "source": result.source,
        "scale": result.scale,
        "mean": result.mean,
        "answers": result.answers,
        "insights": [
            {
                "kind": i.kind,
                "severity": i.severity,
                "finding": i.finding,
                "action": i.action,
                "evidence": list(i.evidence),
                "data": dict(i.data),
            }
            for i in result.insights
        ],
    }


def _lines(result: RunInsights, bullet: str, bold: tuple[str, str]) -> list[str]:
    what = "field grades" if result.source == "field_grades" else "criteria judgments"
    mean = "-" if result.mean is None else _fmt(result.mean, result.scale)
    lines = [
        f"Insights for run {result.run_id} (suite {result.suite}; {what}, mean {mean} of "
        f"{result.scale} over {result.answers} answers)",
        "",
    ]
    if not result.insights:
        lines.append(
            "No problem pattern found: nothing fails everywhere, no model or input stands out."
        )
    for n, insight in enumerate(result.insights, 1):
        lines.append(f"{n}. {bold[0]}[{insight.severity}] {insight.finding}{bold[1]}")
        lines.append(f"   Action: {insight.action}")
        lines += [f"   {bullet} {line}" for line in insight.evidence]
    return lines


def format_insights(result: RunInsights, fmt: DiffFormat = "text") -> str:
    """Render insights as ``text``, ``markdown`` or ``json``.

    Raises:
        ConfigError: An unknown format.
    """
    return render_as(
        fmt,
        "insights",
        text=lambda: "\n".join(_lines(result, "-", ("", ""))) + "\n",
        markdown=lambda: "## " + "\n".join(_lines(result, "-", ("**", "**"))) + "\n",
        data=lambda: insights_to_dict(result),
    )
