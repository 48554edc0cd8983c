"""What the HTML report shows, computed from a stored run (no markup here but the charts).

Plain data for the template: summary facts, the per-scenario matrices (a panel per role),
every answer with its judgments and checks, temperature charts, comparisons, errors.
Texts stay raw here: the template escapes them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from qualspec.analysis import (
    CHECKS_EVALUATOR,
    CellScore,
    CellVerdict,
    RowVerdict,
    answer_verdict,
    candidate_records,
    cell_scores,
    format_temperature,
    format_verdict_score,
    judgments_by_response,
    panel_members_of,
    run_totals,
    run_verdicts,
)
from qualspec.judges import is_comparison
from qualspec.report._html_analysis import CellMetricsView, analysis_view, point_marks
from qualspec.report._html_compare import comparison_views
from qualspec.report._html_data import (
    CellView,
    ChartView,
    ErrorView,
    InputBlock,
    JudgmentView,
    MatrixRow,
    ReportView,
    ResponseView,
    RolePanel,
    ScenarioView,
)
from qualspec.report._html_fields import fields_view
from qualspec.report._html_summary import (
    Fact,
    calibration_lines,
    fmt_money,
    fmt_score,
    plural,
    saved_text,
    summary_facts,
)
from qualspec.report._html_svg import Series, score_chart

if TYPE_CHECKING:
    from qualspec.analysis import RunAnalysis
    from qualspec.providers import PriceTable
    from qualspec.store import JudgmentRecord, ResponseRecord, RunRecord

__all__ = ["ReportView", "build_view"]


# ----------------------------------------------------------------------------- helpers


def _temp_key(t: float | None) -> tuple[int, float]:
    return (0, 0.0) if t is None else (1, t)


def _cell_view(cell: CellScore | None, verdict: CellVerdict | None = None) -> CellView:
    if cell is None:
        return CellView("", "empty")
    passed = cell.passed if verdict is None else verdict.passed
    notes = [plural(cell.n_runs, "run")]
    if cell.n_errors:
        notes.append(f"{cell.n_errors} failed")
    if cell.n_unscored:
        notes.append(f"{cell.n_unscored} unscored")
    threshold = verdict.threshold if verdict is not None else cell.threshold
    if threshold is not None:
        notes.append(f"passes at {fmt_score(threshold)}")
    if verdict is not None and verdict.voted:
        notes.append(f"{verdict.runs_passed} of {plural(verdict.voted, 'run')} passed")
    if verdict is not None and verdict.reasons:
        notes.append("FAIL: " + "; ".join(verdict.reasons))
    title = ", ".join(notes)
    if cell.mean is None:
        if verdict is not None and verdict.score is not None:  # field grades, 0-100
            return CellView(verdict.score_text, _verdict_css(passed), title)
        if passed is not None:  # checks alone decided
            return CellView("PASS" if passed else "FAIL", _verdict_css(passed), title)
        if cell.n_errors >= cell.n_runs:
            return CellView("error", "error", title)
        if cell.n_judgments == 0:
            return CellView("answered", "answered", title)
        return CellView("unscored", "unscored", title)
    return CellView(_score_below(cell.mean, threshold), _verdict_css(passed), title)


def _row_verdict(verdict: RowVerdict | None, aggregation: str) -> tuple[CellView, str]:
    """The verdict column of a candidate's row, and why it failed."""
    if verdict is None:
        return CellView("", "empty"), ""
    css = {"PASS": "pass", "FAIL": "fail", "ERROR": "error", "ANSWERED": "answered"}
    notes = []
    if aggregation == "majority" and verdict.voted:
        notes.append(f"{verdict.runs_passed} of {plural(verdict.voted, 'run')} passed")
    if verdict.cells > 1:
        notes.append(f"{verdict.cells_passed} of {plural(verdict.cells, 'temperature')} passed")
    view = CellView(verdict.label, css.get(verdict.label, "unscored"), ", ".join(notes))
    return view, "; ".join(verdict.reasons)


def _verdict_css(passed: bool | None) -> str:
    return "unscored" if passed is None else ("pass" if passed else "fail")


def _merge(cells: Iterable[CellScore], verdict: RowVerdict | None = None) -> CellView:
    """A candidate's mean over temperatures (the console's nested line)."""
    cs = list(cells)
    means = [c.mean for c in cs if c.mean is not None]
    if verdict is not None:
        passed = verdict.passed
        has_verdict = passed is not None
    else:
        verdicts = [c.passed for c in cs if c.passed is not None]
        passed = all(verdicts) if verdicts else None
        has_verdict = bool(verdicts)
    if not means:
        if verdict is not None and verdict.score is not None:  # field grades, 0-100
            return CellView(verdict.score_text, _verdict_css(passed), "mean over temperatures")
        return CellView("-", _verdict_css(passed) if has_verdict else "empty")
    title = "mean over temperatures"
    if verdict is not None and verdict.reasons:
        title += "; FAIL: " + "; ".join(verdict.reasons)
    threshold = verdict.threshold if verdict is not None else None
    return CellView(_score_below(sum(means) / len(means), threshold), _verdict_css(passed), title)


def _score_below(score: float, threshold: float | None) -> str:
    """``fmt_score``, with enough decimals that a score under ``threshold`` never reads as
    it (6.96 where 7 passes is ``6.96``, not ``7``)."""
    text = fmt_score(score)
    digits = 1
    while threshold is not None and score < threshold <= float(text) and digits < 6:
        digits += 1
        text = f"{score:.{digits}f}"
    return text


# ----------------------------------------------------------------------------- judgments


def _judgment_view(j: JudgmentRecord) -> JudgmentView:
    if j.error is not None:
        verdict, css = "ERROR", "error"
    elif j.score is None and j.passed is None:
        verdict, css = "UNSCORED", "unscored"
    elif j.passed is None:
        verdict, css = "", "answered"
    else:
        verdict, css = ("PASS", "pass") if j.passed else ("FAIL", "fail")
    notes = []
    if j.unscored_reason:
        notes.append(f"unscored: {j.unscored_reason}")
    if j.error:
        notes.append(f"error: {j.error}")
    if j.judge_model and j.evaluator != CHECKS_EVALUATOR:
        notes.append(f"judge {j.judge_model}" + (" (cached)" if j.cached else ""))
    score = "" if j.evaluator == CHECKS_EVALUATOR else fmt_score(j.score)
    if j.threshold is not None and j.score is not None and j.evaluator != CHECKS_EVALUATOR:
        notes.insert(0, f"passes at {fmt_score(j.threshold)}")
    return JudgmentView(
        evaluator=j.evaluator,
        criterion=j.criterion,
        score=score,
        verdict=verdict,
        css=css,
        reasoning=j.reasoning or "",
        note="; ".join(notes),
        panel=[
            (
                str(m["judge"]),
                fmt_score(m["score"]) if isinstance(m.get("score"), int | float) else "-",
                str(m.get("reasoning") or f"unscored: {m.get('unscored_reason') or '?'}"),
            )
            for m in panel_members_of(j)
        ],
    )


def _response_view(
    r: ResponseRecord, judgments: list[JudgmentRecord], anchor: str, threshold: float | None
) -> ResponseView:
    judged = [j for j in judgments if j.evaluator != CHECKS_EVALUATOR]
    checks = [j for j in judgments if j.evaluator == CHECKS_EVALUATOR]
    # the answer's verdict as the reports' (qualspec.analysis.answer_verdict): its judge
    # score (0-10), else its field grade (0-100) for a reference-graded answer
    parts = answer_verdict(judgments, error=r.error is not None)
    passed, mean, scale = parts.verdict(
        parts.judge_threshold if parts.judge_threshold is not None else threshold
    )
    if mean is None and judged and passed:
        passed = None  # checks alone never pass an answer whose judge could not score it
    if r.error is not None:
        verdict, css = "ERROR", "error"
    elif passed is None:
        verdict, css = ("UNSCORED", "unscored") if judgments else ("ANSWERED", "answered")
    else:
        verdict, css = ("PASS", "pass") if passed else ("FAIL", "fail")
    facts = [Fact("model", f"{r.provider}/{r.model}")]
    if r.effective_temperature is not None and r.effective_temperature != r.temperature:
        facts.append(Fact("temperature sent", f"{r.effective_temperature:g}"))
    tokens = f"{r.input_tokens if r.input_tokens is not None else '?'} in / "
    tokens += f"{r.output_tokens if r.output_tokens is not None else '?'} out"
    facts.append(Fact("tokens", tokens))
    if r.latency_s is not None:
        facts.append(Fact("latency", f"{r.latency_s:.2f} s"))
    facts.append(Fact("cost", "cached" if r.cached else fmt_money(r.cost_usd)))
    if r.finish_reason:
        facts.append(Fact("finish", r.finish_reason))
    if r.attempts > 1:
        facts.append(Fact("attempts", str(r.attempts)))
    return ResponseView(
        anchor=anchor,
        candidate=r.candidate,
        temperature=format_temperature(r.temperature),
        run=r.run_index + 1,
        score=fmt_score(mean) if scale == 10 else format_verdict_score(mean, scale),
        verdict=verdict,
        css=css,
        text=r.text,
        error=r.error,
        facts=facts,
        judgments=[_judgment_view(j) for j in judged],
        checks=[_judgment_view(j) for j in checks],
    )


# ----------------------------------------------------------------------------- build


_Tree = dict[str | None, dict[str, dict[Any, CellScore]]]  # input -> candidate -> temp -> cell


class _Builder:
    """Builds the matrices, answers and chart series of a run, scenario by scenario."""

    def __init__(self, run: RunRecord, analysis: RunAnalysis | None) -> None:
        self.marks, self.metrics = point_marks(analysis) if analysis is not None else ({}, {})
        self.cells = cell_scores(candidate_records(run))
        self.verdicts = run_verdicts(run)
        self.judged = judgments_by_response(run)
        self.temps = sorted({key[4] for key in self.cells}, key=_temp_key)
        self.labels = [format_temperature(t) for t in self.temps]
        self.roles = list(dict.fromkeys(key[2] for key in self.cells if key[2] is not None))
        meta_judge = (run.summary.metadata or {}).get("judge")
        threshold = meta_judge.get("threshold") if isinstance(meta_judge, dict) else None
        self.threshold = float(threshold) if isinstance(threshold, int | float) else None
        self.responses: dict[tuple[Any, ...], list[ResponseRecord]] = defaultdict(list)
        self.references: dict[str, list[ResponseRecord]] = defaultdict(list)
        for r in run.responses:
            if r.kind == "candidate":
                self.responses[(r.scenario, r.input_id, r.role)].append(r)
            elif r.kind == "reference":
                self.references[r.scenario].append(r)
        self.n_anchor = 0

    def scenarios(self) -> tuple[list[ScenarioView], list[ChartView]]:
        # scenario -> role -> input -> candidate -> temperature -> cell, in suite order
        tree: dict[str, dict[str | None, _Tree]] = {}
        for key, cell in self.cells.items():
            scenario, input_id, role, candidate, t = key
            by_input = tree.setdefault(scenario, {}).setdefault(role, {})
            by_input.setdefault(input_id, {}).setdefault(candidate, {})[t] = cell
        views: list[ScenarioView] = []
        charts: list[ChartView] = []
        for scenario, by_role in tree.items():
            panels: list[RolePanel] = []
            series: list[Series] = []
            for role, by_input in by_role.items():
                panels.append(self._panel(scenario, role, by_input))
                series.extend(self._series(role, by_input))
            views.append(ScenarioView(scenario, panels, *self._references(scenario)))
            if len(self.temps) > 1 and series:
                title = f"{scenario}: mean score by temperature"
                charts.append(ChartView(scenario, score_chart(series, title=title), len(series)))
        return views, charts

    def _panel(self, scenario: str, role: str | None, by_input: _Tree) -> RolePanel:
        blocks: list[InputBlock] = []
        for input_id, by_candidate in by_input.items():
            rows: list[MatrixRow] = []
            metrics: list[CellMetricsView] = []
            for candidate, by_temp in by_candidate.items():
                cid = (scenario, input_id, role, candidate)
                row_verdict = self.verdicts.rows.get(cid)
                verdict, reasons = _row_verdict(row_verdict, self.verdicts.aggregation)
                rows.append(
                    MatrixRow(
                        candidate=candidate,
                        cells=[self._cell(cid, by_temp.get(t), t) for t in self.temps],
                        overall=(
                            _merge(by_temp.values(), row_verdict) if len(self.temps) > 1 else None
                        ),
                        verdict=verdict,
                        reasons=reasons,
                    )
                )
                if cid in self.metrics and len(self.temps) > 1:
                    metrics.append(self.metrics[cid])
            order = {c: i for i, c in enumerate(by_candidate)}
            records = sorted(
                self.responses.get((scenario, input_id, role), []),
                key=lambda r: (
                    order.get(r.candidate, len(order)),
                    _temp_key(r.temperature),
                    r.run_index,
                ),
            )
            answers = [self._answer(r) for r in records]
            blocks.append(InputBlock(input_id, self.labels, rows, answers, metrics))
        index = self.roles.index(role) if role is not None else None
        return RolePanel(index, role, blocks)

    def _cell(
        self, cid: tuple[str, str | None, str | None, str], cell: CellScore | None, t: Any
    ) -> CellView:
        view = _cell_view(cell, self.verdicts.cells.get((*cid, t)))
        found = self.marks.get((cid, t))
        if found is not None and view.css != "empty":
            view.marks = found[0]
            view.title = f"{view.title}; {found[1]}" if view.title else found[1]
        return view

    def _answer(self, r: ResponseRecord) -> ResponseView:
        self.n_anchor += 1
        own = [j for j in self.judged.get(r.key, []) if not is_comparison(j)]
        return _response_view(r, own, f"r{self.n_anchor}", self.threshold)

    def _references(self, scenario: str) -> tuple[str, list[ResponseView]]:
        """The reference model(s) of a scenario, and its reference answers."""
        records = sorted(
            self.references.get(scenario, []), key=lambda r: (str(r.input_id), r.run_index)
        )
        models = ", ".join(dict.fromkeys(f"{r.provider}/{r.model}" for r in records))
        views = []
        for r in records:
            view = self._answer(r)
            view.candidate = "reference" + (f" · input {r.input_id}" if r.input_id else "")
            view.verdict, view.css, view.score = "REFERENCE", "answered", "-"
            views.append(view)
        return models, views

    @staticmethod
    def _series(role: str | None, by_input: _Tree) -> list[Series]:
        """Per candidate: the mean over the scenario's inputs at each temperature."""
        means: dict[str, dict[Any, list[float]]] = {}
        for by_candidate in by_input.values():
            for candidate, by_temp in by_candidate.items():
                for t, cell in by_temp.items():
                    found = means.setdefault(candidate, {}).setdefault(t, [])
                    if cell.mean is not None:
                        found.append(cell.mean)
        out = []
        for candidate, scores in means.items():
            points = tuple(
                (t, sum(v) / len(v) if v else None)
                for t, v in sorted(scores.items(), key=lambda p: _temp_key(p[0]))
            )
            out.append(Series(candidate if role is None else f"{candidate} ({role})", points))
        return out


def _errors(run: RunRecord) -> list[ErrorView]:
    errors = [ErrorView(_where(r), "answer", r.error) for r in run.responses if r.error is not None]
    by_key = {r.key: r for r in run.responses}
    for j in run.judgments:
        if j.error is None:
            continue
        found = by_key.get(j.response_key)
        where = _where(found) if found is not None else j.response_key
        errors.append(ErrorView(f"{where}: {j.evaluator} / {j.criterion}", "judgment", j.error))
    return errors


def build_view(
    run: RunRecord, *, prices: PriceTable | None = None, analysis: RunAnalysis | None = None
) -> ReportView:
    """Compute what the report shows for ``run`` (see the module docstring).

    With ``analysis`` (of the same run), cells get their "flaky"/"unstable" marks, each
    matrix its temperature metrics, and the view the run-wide analysis.
    """
    builder = _Builder(run, analysis)
    scenarios, charts = builder.scenarios()
    from qualspec.analysis import field_analysis, judge_agreement
    from qualspec.report._console_panel import agreement_lines

    found = field_analysis(run)
    s = run.summary
    return ReportView(
        suite=s.suite_name,
        run_id=s.id,
        status=s.status,
        started=s.started_at.strftime("%Y-%m-%d %H:%M:%S"),
        finished=s.finished_at.strftime("%Y-%m-%d %H:%M:%S") if s.finished_at else "-",
        facts=summary_facts(run, run_totals(run), builder.verdicts, saved_text(run, prices)),
        roles=builder.roles,
        scenarios=scenarios,
        charts=charts,
        comparisons=comparison_views(run),
        errors=_errors(run),
        calibration=calibration_lines(run),
        analysis=analysis_view(analysis) if analysis is not None else None,
        fields=fields_view(found, run) if found is not None else None,
        aggregation=builder.verdicts.aggregation,
        agreement=agreement_lines(judge_agreement(run.judgments)),
    )


def _where(r: ResponseRecord) -> str:
    parts = [r.scenario]
    if r.input_id is not None:
        parts.append(f"input {r.input_id}")
    parts.append(r.candidate if r.role is None else f"{r.candidate} ({r.role})")
    parts.append(f"T {format_temperature(r.temperature)}, run {r.run_index + 1}")
    return " / ".join(parts)
