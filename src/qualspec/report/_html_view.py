"""What the HTML report shows, computed from a stored run (no markup here but the charts).

Plain data for the template: summary facts, the per-scenario matrices (a panel per role),
every answer with its judgments and checks, temperature charts, comparisons, errors.
Texts stay raw here: the template escapes them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from qualspec.analysis import (
    CHECKS_EVALUATOR,
    CellScore,
    cell_scores,
    judgments_by_response,
    run_totals,
)
from qualspec.report._html_compare import ComparisonView, comparison_views
from qualspec.report._html_svg import Series, score_chart, temperature_label

if TYPE_CHECKING:
    from qualspec.analysis import RunTotals
    from qualspec.providers import PriceTable
    from qualspec.store import JudgmentRecord, ResponseRecord, RunRecord

__all__ = ["ReportView", "build_view", "is_comparison"]


def is_comparison(judgment: JudgmentRecord) -> bool:
    """Whether a record is a comparative judge's (one record per group of responses)."""
    return isinstance(judgment.details, dict) and judgment.details.get("type") == "comparison"


@dataclass(slots=True)
class Fact:
    """One summary line: a label, a value and an optional note (e.g. a split)."""

    label: str
    value: str
    note: str = ""


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
    analysis: Any = None


# ----------------------------------------------------------------------------- helpers


def _score(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.1f}".rstrip("0").rstrip(".") if x % 1 else f"{x:.0f}"


def _money(x: float | None) -> str:
    return "unknown" if x is None else f"${x:.4f}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _temp_key(t: float | None) -> tuple[int, float]:
    return (0, 0.0) if t is None else (1, t)


def _cell_view(cell: CellScore | None) -> CellView:
    if cell is None:
        return CellView("", "empty")
    notes = [_plural(cell.n_runs, "run")]
    if cell.n_errors:
        notes.append(f"{cell.n_errors} failed")
    if cell.n_unscored:
        notes.append(f"{cell.n_unscored} unscored")
    if cell.threshold is not None:
        notes.append(f"passes at {_score(cell.threshold)}")
    title = ", ".join(notes)
    if cell.mean is None:
        if cell.passed is not None:  # checks alone decided
            return CellView("PASS" if cell.passed else "FAIL", _verdict_css(cell.passed), title)
        if cell.n_errors >= cell.n_runs:
            return CellView("error", "error", title)
        if cell.n_judgments == 0:
            return CellView("answered", "answered", title)
        return CellView("unscored", "unscored", title)
    return CellView(_score(cell.mean), _verdict_css(cell.passed), title)


def _verdict_css(passed: bool | None) -> str:
    return "unscored" if passed is None else ("pass" if passed else "fail")


def _merge(cells: Iterable[CellScore]) -> CellView:
    """A candidate's mean over temperatures (the console's nested line)."""
    cs = list(cells)
    means = [c.mean for c in cs if c.mean is not None]
    verdicts = [c.passed for c in cs if c.passed is not None]
    passed = all(verdicts) if verdicts else None
    if not means:
        return CellView("-", _verdict_css(passed) if verdicts else "empty")
    return CellView(_score(sum(means) / len(means)), _verdict_css(passed), "mean over temperatures")


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
    score = "" if j.evaluator == CHECKS_EVALUATOR else _score(j.score)
    if j.threshold is not None and j.score is not None and j.evaluator != CHECKS_EVALUATOR:
        score += f" / pass at {_score(j.threshold)}"
    return JudgmentView(
        evaluator=j.evaluator,
        criterion=j.criterion,
        score=score,
        verdict=verdict,
        css=css,
        reasoning=j.reasoning or "",
        note="; ".join(notes),
    )


def _response_view(
    r: ResponseRecord, judgments: list[JudgmentRecord], anchor: str, threshold: float | None
) -> ResponseView:
    judged = [j for j in judgments if j.evaluator != CHECKS_EVALUATOR]
    checks = [j for j in judgments if j.evaluator == CHECKS_EVALUATOR]
    scores = [j.score for j in judged if j.score is not None]
    mean = sum(scores) / len(scores) if scores else None
    limits = [j.threshold for j in judged if j.score is not None and j.threshold is not None]
    limit = max(limits) if limits else threshold
    passed: bool | None = None if mean is None or limit is None else mean >= limit
    check_flags = [j.passed for j in checks if j.passed is not None]
    if check_flags:
        passed = all(check_flags) and passed is not False
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
    facts.append(Fact("cost", "cached" if r.cached else _money(r.cost_usd)))
    if r.finish_reason:
        facts.append(Fact("finish", r.finish_reason))
    if r.attempts > 1:
        facts.append(Fact("attempts", str(r.attempts)))
    return ResponseView(
        anchor=anchor,
        candidate=r.candidate,
        temperature=temperature_label(r.temperature),
        run=r.run_index + 1,
        score=_score(mean),
        verdict=verdict,
        css=css,
        text=r.text,
        error=r.error,
        facts=facts,
        judgments=[_judgment_view(j) for j in judged],
        checks=[_judgment_view(j) for j in checks],
    )


# ----------------------------------------------------------------------------- summary


def _saved(run: RunRecord, prices: PriceTable | None) -> str:
    """What the cached calls would have cost at today's prices."""
    cached_r = [r for r in run.responses if r.cached and r.error is None]
    cached_j = [j for j in run.judgments if j.cached and j.error is None and j.judge_model]
    if not cached_r and not cached_j:
        return "nothing from cache"
    if prices is None:
        from qualspec.providers import PriceTable

        prices = PriceTable.load()
    total: float | None = 0.0
    calls = [(r.provider, r.model, r.input_tokens, r.output_tokens) for r in cached_r]
    for j in cached_j:
        provider, _, model = (j.judge_model or "").partition("/")
        calls.append((provider, model, j.input_tokens, j.output_tokens))
    for provider, model, tokens_in, tokens_out in calls:
        cost = prices.cost(provider, model, tokens_in, tokens_out)
        if cost is None or total is None:
            total = None
            continue
        total += cost
    what = f"{_plural(len(cached_r), 'answer')} and {_plural(len(cached_j), 'judgment')}"
    value = "saved an unknown amount (a model has no price)" if total is None else (
        f"saved {_money(total)} at today's prices"
    )
    return f"{what} from cache: {value}"


def _facts(run: RunRecord, t: RunTotals, cells: dict[Any, CellScore], saved: str) -> list[Fact]:
    verdicts = [c.passed for c in cells.values() if c.passed is not None]
    n_pass = sum(1 for v in verdicts if v)
    rate = f"{100 * n_pass / len(verdicts):.0f}%" if verdicts else "-"
    meta = run.summary.metadata or {}
    dims = meta.get("dimensions") if isinstance(meta.get("dimensions"), dict) else {}
    facts = [
        Fact(
            "pass rate",
            rate,
            f"{n_pass} of {_plural(len(verdicts), 'cell')} with a verdict passed",
        ),
        Fact(
            "answers",
            str(t.responses),
            ", ".join(
                x
                for x in (
                    f"{_plural(t.errors, 'error')}" if t.errors else "",
                    f"{t.cached_responses} from cache" if t.cached_responses else "",
                )
                if x
            ),
        ),
    ]
    judgments = t.judgments - t.checks
    if judgments:
        facts.append(
            Fact(
                "judgments",
                str(judgments),
                f"{t.passed - t.checks_passed} passed, {t.failed - t.checks_failed} failed, "
                f"{t.unscored} unscored; mean score {_score(t.mean_score)}",
            )
        )
    if t.checks:
        facts.append(
            Fact("checks", str(t.checks), f"{t.checks_passed} passed, {t.checks_failed} failed")
        )
    facts.append(
        Fact(
            "tokens",
            f"{t.candidate_input_tokens + t.judge_input_tokens} in / "
            f"{t.candidate_output_tokens + t.judge_output_tokens} out",
            f"candidates {t.candidate_input_tokens} in / {t.candidate_output_tokens} out; "
            f"judge {t.judge_input_tokens} in / {t.judge_output_tokens} out",
        )
    )
    facts.append(
        Fact(
            "cost",
            _money(t.cost_usd),
            f"candidates {_money(t.candidate_cost_usd)}, judge {_money(t.judge_cost_usd)}"
            + ("; a model has no known price" if t.cost_usd is None else ""),
        )
    )
    facts.append(Fact("cache", saved))
    judge = meta.get("judge") if isinstance(meta.get("judge"), dict) else None
    if judge and judge.get("model"):
        threshold = judge.get("threshold")
        facts.append(
            Fact(
                "judge",
                str(judge["model"]),
                f"pass at {_score(threshold)}/10" if isinstance(threshold, int | float) else "",
            )
        )
    temps = dims.get("temperatures") if isinstance(dims, dict) else None
    if isinstance(temps, list) and temps:
        runs = dims.get("runs")
        facts.append(
            Fact(
                "temperatures",
                ", ".join(temperature_label(x) for x in temps),
                f"{_plural(runs, 'run')} per temperature" if isinstance(runs, int) else "",
            )
        )
    return facts


def _calibration(run: RunRecord) -> list[str]:
    found = (run.summary.metadata or {}).get("judge_calibration")
    if not isinstance(found, dict):
        return []
    return [
        m["verdict"]
        for m in found.values()
        if isinstance(m, dict) and isinstance(m.get("verdict"), str)
    ]


# ----------------------------------------------------------------------------- build


def build_view(run: RunRecord, *, prices: PriceTable | None = None) -> ReportView:
    """Compute what the report shows for ``run`` (see the module docstring)."""
    cells = cell_scores(run)
    judged = judgments_by_response(run)
    totals = run_totals(run)
    temps = sorted({key[4] for key in cells}, key=_temp_key)
    labels = [temperature_label(t) for t in temps]
    roles = list(dict.fromkeys(key[2] for key in cells if key[2] is not None))
    role_index = {role: i for i, role in enumerate(roles)}
    meta_judge = (run.summary.metadata or {}).get("judge")
    threshold = meta_judge.get("threshold") if isinstance(meta_judge, dict) else None

    responses: dict[tuple[Any, ...], list[ResponseRecord]] = defaultdict(list)
    for r in run.responses:
        if r.kind == "candidate":
            responses[(r.scenario, r.input_id, r.role)].append(r)

    # scenario -> role -> input -> candidate -> temperature -> cell
    tree: dict[str, dict[str | None, dict[str | None, dict[str, dict[Any, CellScore]]]]] = {}
    for key, cell in cells.items():
        scenario, input_id, role, candidate, t = key
        by_role = tree.setdefault(scenario, {})
        by_input = by_role.setdefault(role, {})
        by_input.setdefault(input_id, {}).setdefault(candidate, {})[t] = cell

    scenarios: list[ScenarioView] = []
    charts: list[ChartView] = []
    n_anchor = 0
    for scenario, by_role in tree.items():
        panels: list[RolePanel] = []
        series: list[Series] = []
        for role, by_input in by_role.items():
            blocks: list[InputBlock] = []
            per_candidate: dict[str, dict[Any, list[float]]] = {}
            for input_id, by_candidate in by_input.items():
                rows = []
                for candidate, by_temp in by_candidate.items():
                    rows.append(
                        MatrixRow(
                            candidate=candidate,
                            cells=[_cell_view(by_temp.get(t)) for t in temps],
                            overall=_merge(by_temp.values()) if len(temps) > 1 else None,
                        )
                    )
                    for t, cell in by_temp.items():
                        if cell.mean is not None:
                            per_candidate.setdefault(candidate, {}).setdefault(t, []).append(
                                cell.mean
                            )
                        else:
                            per_candidate.setdefault(candidate, {}).setdefault(t, [])
                order = {c: i for i, c in enumerate(by_candidate)}
                records = sorted(
                    responses.get((scenario, input_id, role), []),
                    key=lambda r: (
                        order.get(r.candidate, len(order)),
                        _temp_key(r.temperature),
                        r.run_index,
                    ),
                )
                views = []
                for r in records:
                    n_anchor += 1
                    own = [j for j in judged.get(r.key, []) if not is_comparison(j)]
                    views.append(_response_view(r, own, f"r{n_anchor}", threshold))
                blocks.append(InputBlock(input_id, labels, rows, views))
            panels.append(
                RolePanel(role_index[role] if role is not None else None, role, blocks)
            )
            for candidate, by_temp in per_candidate.items():
                label = candidate if role is None else f"{candidate} ({role})"
                points = tuple(
                    (t, sum(v) / len(v) if v else None)
                    for t, v in sorted(by_temp.items(), key=lambda p: _temp_key(p[0]))
                )
                series.append(Series(label, points))
        scenarios.append(ScenarioView(scenario, panels))
        if len(temps) > 1 and series:
            title = f"{scenario}: mean score by temperature"
            charts.append(ChartView(scenario, score_chart(series, title=title), len(series)))

    errors = [
        ErrorView(_where(r), "answer", r.error) for r in run.responses if r.error is not None
    ]
    by_key = {r.key: r for r in run.responses}
    for j in run.judgments:
        if j.error is None:
            continue
        r = by_key.get(j.response_key)
        where = _where(r) if r is not None else j.response_key
        errors.append(ErrorView(f"{where}: {j.evaluator} / {j.criterion}", "judgment", j.error))

    s = run.summary
    return ReportView(
        suite=s.suite_name,
        run_id=s.id,
        status=s.status,
        started=s.started_at.strftime("%Y-%m-%d %H:%M:%S"),
        finished=s.finished_at.strftime("%Y-%m-%d %H:%M:%S") if s.finished_at else "-",
        facts=_facts(run, totals, cells, _saved(run, prices)),
        roles=roles,
        scenarios=scenarios,
        charts=charts,
        comparisons=comparison_views(run),
        errors=errors,
        calibration=_calibration(run),
    )


def _where(r: ResponseRecord) -> str:
    parts = [r.scenario]
    if r.input_id is not None:
        parts.append(f"input {r.input_id}")
    parts.append(r.candidate if r.role is None else f"{r.candidate} ({r.role})")
    parts.append(f"T {temperature_label(r.temperature)}, run {r.run_index + 1}")
    return " / ".join(parts)
