"""The console block of a run with field grades (reference-graded testing): overall
scores and band, per model, the hardest inputs, the most problematic fields, flags, and
the cost per suite (agent, reference and grading calls), then per model, per input and per
prompt version. Names are printed as literal text (never read as rich markup)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from qualspec.report._field_text import call_cost_text, money_text, pct_text, score_text
from qualspec.report._optional_blocks import has_field_grades

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rich.console import Console

    from qualspec.analysis import FieldAnalysis, GroupCost
    from qualspec.store import RunRecord

__all__ = ["render_field_grades"]

_MAX_ROWS = 10


def render_field_grades(
    run: RunRecord,
    console: Console,
    analysis: FieldAnalysis | None = None,
    prompts: Mapping[int, tuple[str, int]] | None = None,
) -> None:
    """Print the field-grade block of ``run`` (nothing when it has no field grades).

    ``prompts`` (prompt version id -> (name, version), ``qualspec.report.prompt_refs``)
    names the prompt versions of the cost per prompt version.
    """
    if analysis is None and not has_field_grades(run):
        return  # nothing to show, and the field analysis stays unimported
    from rich.table import Table
    from rich.text import Text

    from qualspec.analysis import field_analysis, suite_costs

    analysis = analysis or field_analysis(run)
    if analysis is None:
        return
    o = analysis.overall
    console.print()
    console.print(
        Text(
            f"Reference-graded fields ({analysis.evaluator}, pass >= {analysis.threshold:g})",
            style="bold",
        )
    )
    graded = o.n - o.n_unscored
    line = (
        f"Overall: {score_text(o.mean)} weighted, {score_text(o.simple_mean)} simple"
        f"  {o.band or 'not graded'}  passed {pct_text(o.pass_rate)} of {graded} graded answers"
        f"  fields passing {pct_text(o.field_pass_rate)}"
    )
    if o.n_unscored:
        line += f"  ({o.n_unscored} of {o.n} not graded)"
    if analysis.errors:
        line += f"  ({analysis.errors} grading calls failed: resume grades them)"
    console.print(Text(line))

    models = Table(title=Text("Per model"))
    for name in ("Model", "Weighted", "Simple", "Pass", "Band", "Answers"):
        models.add_column(name, justify="left" if name in ("Model", "Band") else "right")
    for model, g in analysis.by_model.items():
        models.add_row(
            Text(model), score_text(g.mean), score_text(g.simple_mean), pct_text(g.pass_rate),
            Text(g.band or "-"), str(g.n),
        )  # fmt: skip
    console.print(models)

    inputs = Table(title=Text("Inputs, hardest first"))
    for name in ("Scenario", "Input", "Mean (difficulty)", "Variance", "Answers"):
        inputs.add_column(name, justify="left" if name in ("Scenario", "Input") else "right")
    for (scenario, input_id), g in list(analysis.by_input.items())[:_MAX_ROWS]:
        variance = "-" if g.variance is None else f"{g.variance:.1f}"
        inputs.add_row(
            Text(scenario), Text(input_id or "-"), score_text(g.mean), variance, str(g.n)
        )
    console.print(inputs)

    fields = Table(title=Text("Fields, most problematic first"))
    for name in ("Field", "Mean", "Pass", "Matches"):
        fields.add_column(name, justify="left" if name in ("Field", "Matches") else "right")
    for f in analysis.fields[:_MAX_ROWS]:
        label = f.name + (" (critical)" if f.critical else "")
        matches = ", ".join(f"{k} {v}" for k, v in f.matches.items())
        fields.add_row(Text(label), score_text(f.mean), pct_text(f.pass_rate), Text(matches))
    console.print(fields)
    if analysis.flags:
        flags = ", ".join(f"{name} {n}" for name, n in analysis.flags.items())
        console.print(Text(f"Flags: {flags}", style="yellow"))
    costs = suite_costs(run)
    console.print(Text("Cost per suite:", style="bold"))
    for kind, label in (("agent", "agent"), ("reference", "reference"), ("grading", "grading")):
        console.print(Text(f"  {label}: {call_cost_text(costs[kind])}"))
    _render_breakdown(run, console, prompts)


def _render_breakdown(
    run: RunRecord, console: Console, prompts: Mapping[int, tuple[str, int]] | None
) -> None:
    from rich.table import Table
    from rich.text import Text

    from qualspec.analysis import cost_breakdown

    breakdown = cost_breakdown(run, prompts)

    def table(title: str, heads: tuple[str, ...]) -> Table:
        out = Table(title=Text(title))
        for name in (*heads, "Calls", "Tokens in", "Tokens out", "Cost"):
            out.add_column(name, justify="left" if name in heads else "right")
        return out

    def cells(g: GroupCost) -> tuple[str, ...]:
        return (str(g.calls), str(g.input_tokens), str(g.output_tokens), money_text(g.cost_usd))

    models = table("Cost per model (its answers and their grading)", ("Model",))
    for model, g in breakdown.by_model.items():
        models.add_row(Text(model), *cells(g))
    console.print(models)
    # the most expensive inputs first (an unknown price last): which inputs need more tokens
    ranked = sorted(
        breakdown.by_input.items(),
        key=lambda kv: (kv[1].cost_usd is None, -(kv[1].cost_usd or 0.0), -kv[1].input_tokens),
    )
    inputs = table("Cost per input (answers, reference, grading), most expensive first", (
        "Scenario", "Input",
    ))  # fmt: skip
    for (scenario, input_id), g in ranked[:_MAX_ROWS]:
        inputs.add_row(Text(scenario), Text(input_id or "-"), *cells(g))
    console.print(inputs)
    if len(ranked) > _MAX_ROWS:
        console.print(Text(f"  ({len(ranked) - _MAX_ROWS} more inputs in the results JSON)"))
    if breakdown.by_prompt_version:
        versions = table(
            "Cost per prompt version (the answers that sent it and their grading)", ("Prompt",)
        )
        for label, g in breakdown.by_prompt_version.items():
            versions.add_row(Text(label), *cells(g))
        console.print(versions)
