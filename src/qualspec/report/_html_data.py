"""The plain data the HTML report's template reads (built by :func:`._html_view.build_view`).

Texts stay raw here: the template escapes them."""

from __future__ import annotations

from dataclasses import dataclass, field

from qualspec.report._html_analysis import AnalysisView, CellMetricsView
from qualspec.report._html_compare import ComparisonView
from qualspec.report._html_fields import FieldsView
from qualspec.report._html_summary import Fact


@dataclass(slots=True)
class CellView:
    """One matrix cell."""

    text: str
    css: str  # pass | fail | unscored | error | answered | empty
    title: str = ""
    marks: tuple[str, ...] = ()


@dataclass(slots=True)
class MatrixRow:
    """A candidate's row: one cell per temperature (and the mean over them)."""

    candidate: str
    cells: list[CellView]
    overall: CellView | None
    verdict: CellView = field(default_factory=lambda: CellView("", "empty"))
    reasons: str = ""


@dataclass(slots=True)
class JudgmentView:
    """One evaluator record about one answer (a criterion's score, or a check)."""

    evaluator: str
    criterion: str
    score: str
    verdict: str  # PASS | FAIL | UNSCORED | ERROR | ""
    css: str
    reasoning: str
    note: str  # unscored reason, error, judge model
    # a judge panel's members: (judge, score, its reasoning or why it gave no score)
    panel: list[tuple[str, str, str]] = field(default_factory=list)


@dataclass(slots=True)
class ResponseView:
    """One answer, shown collapsed under its matrix."""

    anchor: str
    candidate: str
    temperature: str
    run: int
    score: str
    verdict: str
    css: str
    text: str | None
    error: str | None
    facts: list[Fact]
    judgments: list[JudgmentView]
    checks: list[JudgmentView]


@dataclass(slots=True)
class InputBlock:
    """The matrix of one scenario input (or the scenario itself) within one role panel."""

    input_id: str | None
    temperatures: list[str]
    rows: list[MatrixRow]
    responses: list[ResponseView]
    metrics: list[CellMetricsView] = field(default_factory=list)


@dataclass(slots=True)
class RolePanel:
    """A scenario's part for one role (index into ``ReportView.roles``; None: no roles)."""

    index: int | None
    role: str | None
    inputs: list[InputBlock]


@dataclass(slots=True)
class ScenarioView:
    """One scenario: a panel per role."""

    name: str
    panels: list[RolePanel]
    reference: str = ""  # the reference model of a reference-graded scenario
    references: list[ResponseView] = field(default_factory=list)


@dataclass(slots=True)
class ChartView:
    """A temperature chart of one scenario."""

    scenario: str
    svg: str  # trusted SVG markup built by score_chart (texts escaped there)
    n_series: int


@dataclass(slots=True)
class ErrorView:
    """A failed call."""

    where: str
    kind: str  # answer | judgment
    message: str


@dataclass(slots=True)
class ReportView:
    """Everything the template shows."""

    suite: str
    run_id: str
    status: str
    started: str
    finished: str
    facts: list[Fact]
    roles: list[str]
    scenarios: list[ScenarioView]
    charts: list[ChartView]
    comparisons: list[ComparisonView]
    errors: list[ErrorView]
    calibration: list[str] = field(default_factory=list)
    analysis: AnalysisView | None = None
    fields: FieldsView | None = None
    aggregation: str = ""
    # the agreement between a judge panel's judges: (line, flagged)
    agreement: list[tuple[str, bool]] = field(default_factory=list)
