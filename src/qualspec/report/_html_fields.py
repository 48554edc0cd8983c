"""The HTML report's summary of a reference-graded run: overall score and band, per model,
the hardest inputs, the most problematic fields, flags and the cost per suite (the
console's block of :mod:`._console_fields`, from the same
:func:`qualspec.analysis.field_analysis`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from qualspec.report._field_text import call_cost_text, pct_text, score_text

if TYPE_CHECKING:
    from qualspec.analysis import FieldAnalysis
    from qualspec.store import RunRecord

__all__ = ["FieldsView", "fields_view"]

_MAX_ROWS = 10


@dataclass(slots=True)
class GradeRow:
    """One line of a grade table (a model, an input)."""

    name: str
    weighted: str
    simple: str
    passed: str
    band: str
    n: str
    variance: str = ""


@dataclass(slots=True)
class FieldRow:
    """One field over the run."""

    name: str
    scenario: str
    mean: str
    passed: str
    matches: str


@dataclass(slots=True)
class FieldsView:
    """The field-grade summary of a run."""

    evaluator: str
    threshold: str
    overall: str
    models: list[GradeRow]
    inputs: list[GradeRow]
    fields: list[FieldRow]
    flags: str
    costs: list[tuple[str, str]] = field(default_factory=list)


def fields_view(analysis: FieldAnalysis, run: RunRecord) -> FieldsView:
    """What the report shows of ``analysis`` (the field grades of ``run``)."""
    from qualspec.analysis import suite_costs

    o = analysis.overall
    graded = o.n - o.n_unscored
    overall = (
        f"{score_text(o.mean)} weighted, {score_text(o.simple_mean)} simple"
        f" · {o.band or 'not graded'}"
        f" · passed {pct_text(o.pass_rate)} of {graded} graded answers"
        f" · fields passing {pct_text(o.field_pass_rate)}"
    )
    if o.n_unscored:
        overall += f" · {o.n_unscored} of {o.n} not graded"
    if analysis.errors:
        overall += f" · {analysis.errors} grading calls failed (resume grades them)"
    models = [
        GradeRow(
            model,
            score_text(g.mean),
            score_text(g.simple_mean),
            pct_text(g.pass_rate),
            g.band or "-",
            str(g.n),
        )
        for model, g in analysis.by_model.items()
    ]
    inputs = [
        GradeRow(
            f"{scenario} / {input_id or '-'}",
            score_text(g.mean),
            score_text(g.simple_mean),
            pct_text(g.pass_rate),
            g.band or "-",
            str(g.n),
            "-" if g.variance is None else f"{g.variance:.1f}",
        )
        for (scenario, input_id), g in list(analysis.by_input.items())[:_MAX_ROWS]
    ]
    fields = [
        FieldRow(
            f.name + (" (critical)" if f.critical else ""),
            f.scenario,
            score_text(f.mean),
            pct_text(f.pass_rate),
            ", ".join(f"{k} {v}" for k, v in f.matches.items()),
        )
        for f in analysis.fields[:_MAX_ROWS]
    ]
    costs = suite_costs(run)
    return FieldsView(
        evaluator=analysis.evaluator,
        threshold=f"{analysis.threshold:g}",
        overall=overall,
        models=models,
        inputs=inputs,
        fields=fields,
        flags=", ".join(f"{name} {n}" for name, n in analysis.flags.items()),
        costs=[(kind, call_cost_text(costs[kind])) for kind in ("agent", "reference", "grading")],
    )
