"""Console report (rich): scenario -> role -> candidate, then Candidate(role) x Temperature.

With several temperatures or roles, the temperature and role analysis follows the scenarios
(:mod:`._console_analysis`); the table cells then carry the runs' spread and the "(flaky)"
and "(unstable)" marks.

The nested lines are built as one styled :class:`rich.text.Text` per block and printed at
once (tables between blocks): the same output as a ``console.print`` per line, about five
times cheaper for a run with hundreds of inputs. Names, ids, answers and error messages
are shown literally (never read as rich markup), in the order of the suite.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from qualspec.report._console_text import (
    _MAX_ERROR_CHARS,
    _Block,
    _Entries,
    _fmt_score,
    _Merged,
    _plural,
    _Points,
)
from qualspec.report._console_totals import _render_totals, test_result_lines

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from qualspec.analysis import (
        CellKey,
        CellScore,
        CellVerdict,
        RowVerdict,
        RunAnalysis,
        RunVerdicts,
    )
    from qualspec.store import ResponseRecord, RunRecord

__all__ = ["render_run"]


def render_run(
    run: RunRecord,
    console: Console,
    *,
    show_responses: bool = False,
    analysis: RunAnalysis | None = None,
    prompts: Mapping[int, tuple[str, int]] | None = None,
    verbose: bool = False,
    verdicts: RunVerdicts | None = None,
) -> None:
    """Print the nested report, temperature tables and totals for ``run``.

    ``analysis`` (default: computed here) is shown for a run with several temperatures or
    roles. ``prompts`` (``qualspec.report.prompt_refs``) names prompt versions. Each
    candidate's PASS/FAIL is :func:`qualspec.analysis.run_verdicts`'s (the
    results file, the HTML report and the web app show the same), with the reason of each
    FAIL. Comparisons are summed up per comparison; ``verbose`` adds each group's winner
    and reason. Reference answers (reference-graded scenarios) are named as the reference,
    not as a candidate.
    """
    from qualspec.analysis import (
        analyze_run,
        candidate_records,
        cell_scores,
        run_verdicts,
        worth_analysing,
    )
    from qualspec.report._comparisons import comparison_blocks

    cells = cell_scores(candidate_records(run))
    if verdicts is None:
        verdicts = run_verdicts(run)
    if not worth_analysing(run):
        analysis = None
    elif analysis is None:
        analysis = analyze_run(run)
    view = _view(run, console, cells, verdicts, analysis, show_responses)
    out = view.out
    _render_header(run, view)
    compared = comparison_blocks(run, verbose=verbose)
    references = _references(run)
    for scenario, by_input in view.by_scenario.items():
        out.line()
        out.line(("SCENARIO:", "bold"), f" {scenario}")
        if scenario in references:
            out.line("  ", ("REFERENCE:", "bold"), f" {references[scenario]}")
        for input_id, input_rows in by_input.items():
            _render_input(view, scenario, input_id, input_rows)
        for parts in compared.get(scenario, ()):
            out.line(*parts)
    out.flush()
    if analysis is not None:
        from qualspec.report._console_analysis import render_analysis

        render_analysis(analysis, console)
    from qualspec.report._console_fields import render_field_grades

    render_field_grades(run, console, prompts=prompts)
    from qualspec.report._console_panel import render_agreement

    render_agreement(run, console)
    _render_totals(run, console, verdicts)


@dataclass
class _RunView:
    """What the parts of :func:`render_run` share."""

    console: Console
    out: _Block
    cells: dict[CellKey, CellScore]
    verdicts: RunVerdicts
    analysis: RunAnalysis | None
    points: _Points  # each cell's point at each temperature, from the analysis
    effective: dict[tuple[str, float | None], set[float]]  # the temperatures providers used
    by_scenario: dict[str, dict[str | None, _Entries]]  # scenario -> input -> rows
    temps: list[float | None]
    labels: dict[float | None, str]  # a column's header, per requested temperature
    by_cell: dict[CellKey, list[ResponseRecord]]  # the responses shown, by run index
    checks: dict[tuple[Any, ...], dict[str, tuple[int, int, str]]]
    spreads: dict[Any, str]  # a panel's spread per candidate line: "6-8, 3 judges"


def _view(
    run: RunRecord,
    console: Console,
    cells: dict[CellKey, CellScore],
    verdicts: RunVerdicts,
    analysis: RunAnalysis | None,
    show_responses: bool,
) -> _RunView:
    from qualspec.analysis import cell_key, temperature_label, temperature_order
    from qualspec.report._console_panel import panel_spreads

    points: _Points = {}
    for metrics in analysis.cells if analysis is not None else ():
        for p in metrics.points:
            row = (metrics.scenario, metrics.input_id, metrics.role, metrics.candidate)
            points[(*row, p.temperature)] = p
    effective: dict[tuple[str, float | None], set[float]] = defaultdict(set)
    for r in run.responses:
        if r.effective_temperature is not None and r.kind == "candidate":
            effective[(r.candidate, r.temperature)].add(r.effective_temperature)

    # scenario -> input -> rows, in the order the cells come (the suite's)
    by_scenario: dict[str, dict[str | None, _Entries]] = {}
    for key, cell in cells.items():
        by_scenario.setdefault(key[0], {}).setdefault(key[1], []).append((key, cell))
    temps = sorted({key[4] for key in cells}, key=temperature_order)
    # every response of a cell, by run index: answers shown with --show-responses, errors
    # always
    by_cell: dict[CellKey, list[ResponseRecord]] = defaultdict(list)
    for r in run.responses:
        if show_responses or r.error is not None:
            by_cell[cell_key(r)].append(r)
    for records in by_cell.values():
        records.sort(key=lambda rec: rec.run_index)
    # a column is one requested temperature; where a candidate's provider ran it at
    # another (clamped), its own cells say so ("(eff 1)"), not the shared header
    labels = {t: f"Temp {temperature_label(t)}" for t in temps} if len(temps) > 1 else {}
    return _RunView(
        console=console,
        out=_Block(console),
        cells=cells,
        verdicts=verdicts,
        analysis=analysis,
        points=points,
        effective=effective,
        by_scenario=by_scenario,
        temps=temps,
        labels=labels,
        by_cell=by_cell,
        checks=_checks_by_row(run),
        spreads=panel_spreads(run),
    )


def _render_header(run: RunRecord, view: _RunView) -> None:
    """The run's name, status, failure, judge check, test results and temperature."""
    summary = run.summary
    out = view.out
    out.line((summary.suite_name, "bold"), "  run ", (summary.id, "cyan"), f"  ({summary.status})")
    if summary.failure:
        out.line(("Failed: ", "bold red"), " ".join(summary.failure.split()))
    calibration = summary.metadata.get("judge_calibration")
    if isinstance(calibration, dict):  # the judge's separation on known pairs
        for measured in calibration.values():
            if isinstance(measured, dict) and isinstance(measured.get("verdict"), str):
                style = "green" if measured.get("meaningful") else "yellow"
                out.line(("Judge check: ", "bold"), (measured["verdict"], style))
    for line in test_result_lines(summary.metadata):  # a run of a qualspec.testkit test
        out.line(("Test results: ", "bold"), line)
    if view.temps == [None]:  # no temperature was sent: say so (a single number is not shown)
        used = sorted({e for values in view.effective.values() for e in values})
        known = f" (run at {', '.join(f'{e:g}' for e in used)})" if used else ""
        out.line(("Temperature:", "bold"), f" default, the provider's own{known}")


def _render_input(
    view: _RunView, scenario: str, input_id: str | None, input_rows: _Entries
) -> None:
    """One input's rows (by role), then its temperature table."""
    out = view.out
    indent = "  "
    if input_id is not None:
        out.line("  ", ("INPUT:", "bold"), f" {input_id}")
        indent = "    "
    by_role: dict[str | None, _Entries] = {}
    for key, cell in input_rows:
        by_role.setdefault(key[2], []).append((key, cell))
    for role, role_rows in by_role.items():
        row_indent = indent
        if role is not None:
            out.line(indent, ("ROLE:", "bold"), f" {role}")
            row_indent = indent + "  "
        merged = _merge_temperatures(role_rows)
        width = max(len(c) for c in merged)
        for candidate, merged_row in merged.items():
            row = (scenario, input_id, role, candidate)
            _render_row(view, row, merged_row, row_indent, width)
            _render_responses(view, row, row_indent)
    if len(view.temps) > 1:
        out.flush()
        view.console.print(
            _table(
                scenario,
                input_id,
                by_role,
                view.temps,
                view.labels,
                view.cells,
                view.points,
                view.analysis,
                view.effective,
                view.verdicts,
            )
        )


def _render_row(
    view: _RunView,
    row: tuple[str, str | None, str | None, str],
    merged: _Merged,
    row_indent: str,
    width: int,
) -> None:
    """A candidate's line (its verdict over the run) and its checks."""
    _mean, _passed, n_unscored, n_errors, n_runs, _n = merged
    row_verdict = view.verdicts.rows.get(row)
    notes = []
    if n_unscored:
        notes.append(f"{n_unscored} unscored")
    if n_errors:
        notes.append(f"{n_errors} of {_plural(n_runs, 'answer')} failed")
    candidate = row[3]
    parts = _row_parts(row_verdict, view.verdicts.aggregation, notes)
    if row in view.spreads:  # a panel: the judges' spread after the score
        parts.insert(2, f" ({view.spreads[row]})")
    view.out.line(f"{row_indent}- {candidate + ':':<{width + 1}} ", *parts)
    for label, (n_ok, n_all, why) in view.checks.get(row, {}).items():
        verdict = ("PASS", "green") if n_ok == n_all else ("FAIL", "red")
        detail = f" ({why})" if why and n_ok < n_all else ""
        view.out.line(f"{row_indent}    check ", verdict, f" {label}: {n_ok}/{n_all}{detail}")


def _render_responses(
    view: _RunView, row: tuple[str, str | None, str | None, str], row_indent: str
) -> None:
    """A candidate's answers (with ``--show-responses``) and errors, per temperature."""
    from qualspec.analysis import temperature_label

    for t in view.temps:
        records = view.by_cell.get((*row, t), [])
        numbered = len(records) > 1
        for rec in records:
            where = f"@{temperature_label(t)}" + (f" run {rec.run_index + 1}" if numbered else "")
            if rec.error is not None:
                view.out.line(f"{row_indent}    ", (f"{where}: error: {_short(rec.error)}", "red"))
            else:
                # continuation lines indented under their answer
                body = (rec.text or "").replace("\n", "\n" + row_indent + "      ")
                view.out.line(f"{row_indent}    ", (f"{where}: {body}", "dim"))


def _checks_by_row(run: RunRecord) -> dict[tuple[Any, ...], dict[str, tuple[int, int, str]]]:
    """Per (scenario, input, role, candidate): each ``expect:`` check's passes, runs and the
    first failure's reason."""
    from qualspec.analysis import CHECKS_EVALUATOR

    responses = {r.key: r for r in run.responses}
    out: dict[tuple[Any, ...], dict[str, tuple[int, int, str]]] = {}
    for j in run.judgments:
        r = responses.get(j.response_key)
        if j.evaluator != CHECKS_EVALUATOR or r is None or j.passed is None:
            continue
        row = out.setdefault((r.scenario, r.input_id, r.role, r.candidate), {})
        n_ok, n_all, why = row.get(j.criterion, (0, 0, ""))
        if not j.passed and not why:
            why = j.reasoning or ""
        row[j.criterion] = (n_ok + int(j.passed), n_all + 1, why)
    return out


def _table(
    scenario: str,
    input_id: str | None,
    by_role: dict[str | None, _Entries],
    temps: list[float | None],
    labels: dict[float | None, str],
    cells: dict[CellKey, CellScore],
    points: _Points,
    analysis: RunAnalysis | None,
    effective: dict[tuple[str, float | None], set[float]],
    verdicts: RunVerdicts,
) -> Table:
    from rich.table import Table
    from rich.text import Text

    from qualspec.report._console_analysis import point_cell_text

    title = f"{scenario}" + (f" / {input_id}" if input_id is not None else "")
    roles = any(role is not None for role in by_role)
    table = Table(title=Text(title))
    table.add_column("Candidate (role)" if roles else "Candidate")
    for t in temps:
        table.add_column(labels[t], justify="right")
    for role, role_rows in by_role.items():
        for cand in dict.fromkeys(k[3] for k, _ in role_rows):
            row: list[str | Text] = [Text(f"{cand} ({role})" if role is not None else cand)]
            for t in temps:
                found = cells.get((scenario, input_id, role, cand, t))
                verdict = verdicts.cells.get((scenario, input_id, role, cand, t))
                if found is None:
                    row.append("")
                elif found.mean is not None and analysis is not None:
                    point = points.get((scenario, input_id, role, cand, t))
                    passed = verdict.passed if verdict is not None else found.passed
                    row.append(point_cell_text(found.mean, passed, point, analysis.aggregation))
                else:
                    row.append(_cell_text(found, verdict))
                if found is not None:
                    row[-1] = _with_effective(row[-1], t, effective.get((cand, t), set()))
            table.add_row(*row)
    return table


def _with_effective(cell: str | Text, requested: float | None, effective: set[float]) -> str | Text:
    """A cell with the temperature its candidate actually ran at, where that differs from
    the column's requested one (``9/10 (eff 1)``)."""
    others = sorted(e for e in effective if e != requested)
    if not others:
        return cell
    from rich.text import Text

    out = cell.copy() if isinstance(cell, Text) else Text(cell)
    out.append(" (eff " + ", ".join(f"{e:g}" for e in others) + ")", "dim")
    return out


def _short(message: str) -> str:
    line = " ".join(message.split())
    return line if len(line) <= _MAX_ERROR_CHARS else line[: _MAX_ERROR_CHARS - 3] + "..."


def _cell_text(cell: CellScore, verdict: CellVerdict | None = None) -> str | Text:
    passed = cell.passed if verdict is None else verdict.passed
    if cell.mean is None:
        if verdict is not None and verdict.score is not None:  # field grades (0-100)
            text = verdict.score_text
        elif verdict is not None and verdict.passed is not None:  # checks alone decided
            text = verdict.label
        elif cell.n_errors >= cell.n_runs:
            return "error"
        else:
            return "answered" if cell.n_judgments == 0 else "unscored"
    else:
        text = _fmt_score(cell.mean).strip()
    if passed or passed is None:
        return text
    from rich.text import Text

    return Text().append(text, "red")  # a styled span, so the cell's padding stays plain


def _merge_temperatures(rows: _Entries) -> dict[str, _Merged]:
    """Per candidate: mean over temperatures of the cell means, and counts."""
    acc: dict[str, list[CellScore]] = defaultdict(list)
    for key, cell in rows:
        acc[key[3]].append(cell)
    out: dict[str, _Merged] = {}
    for cand, cs in acc.items():
        means = [c.mean for c in cs if c.mean is not None]
        mean = sum(means) / len(means) if means else None
        verdicts = [c.passed for c in cs if c.passed is not None]
        passed = all(verdicts) if verdicts else None
        out[cand] = (
            mean,
            passed,
            sum(c.n_unscored for c in cs),
            sum(c.n_errors for c in cs),
            sum(c.n_runs for c in cs),
            sum(c.n_judgments for c in cs),
        )
    return out


_LABEL_STYLES = {
    "PASS": "green",
    "FAIL": "red",
    "ERROR": "red",
    "ANSWERED": "cyan",  # answered, nothing judged (--no-judge)
    "UNSCORED": "yellow",
}


def _row_parts(
    verdict: RowVerdict | None, aggregation: str, notes: list[str]
) -> list[str | tuple[str, str]]:
    """``[FAIL] 8.1/10 (at 1.5: 6.3/10 < 7)``: the verdict, the score, why it failed, and
    under ``majority`` how many runs passed."""
    if verdict is None:
        return [("[UNSCORED]", "yellow"), f" {_fmt_score(None)}"]
    label = verdict.label
    notes = list(notes)
    if aggregation == "majority" and verdict.voted and verdict.passed is not None:
        notes.insert(0, f"{verdict.runs_passed} of {_plural(verdict.voted, 'run')} passed")
    score = _fmt_score(verdict.score) if verdict.scale == 10 else f"{verdict.score_text}"
    parts: list[str | tuple[str, str]] = [(f"[{label}]", _LABEL_STYLES[label]), f" {score}"]
    if verdict.reasons:
        parts.append((f" ({'; '.join(verdict.reasons)})", "red"))
    if notes:
        parts.append(f"  ({', '.join(notes)})")
    return parts


def _references(run: RunRecord) -> dict[str, str]:
    """Scenario -> the reference model that answered it, with its answer count."""
    found: dict[str, dict[str, list[ResponseRecord]]] = {}
    for r in run.responses:
        if r.kind == "reference":
            found.setdefault(r.scenario, {}).setdefault(f"{r.provider}/{r.model}", []).append(r)
    out: dict[str, str] = {}
    for scenario, models in found.items():
        parts = []
        for model, records in models.items():
            notes = [_plural(len(records), "reference answer")]
            cached = sum(1 for r in records if r.cached)
            if cached:
                notes.append(f"{cached} from cache")
            errors = sum(1 for r in records if r.error is not None)
            if errors:
                notes.append(f"{errors} failed")
            parts.append(f"{model} ({', '.join(notes)})")
        out[scenario] = ", ".join(parts)
    return out
