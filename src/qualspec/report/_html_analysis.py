"""The analysis part of the HTML report, from :func:`qualspec.analysis.analyze_run`.

Per cell (candidate, role, scenario, input): its temperature metrics (stability, flake
temperature, safety ceiling, optimal temperature, sensitivity) and the "(flaky)" and
"(unstable)" marks of its temperatures; per run: the observations, the recommended
temperature per candidate, the stability ranking and the role gaps with their intervals.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from qualspec.analysis import (
    MIN_GAP_PAIRS,
    NOT_MEANINGFUL,
    format_recommendation,
    format_temperature,
    stability_ranking,
)

if TYPE_CHECKING:
    from qualspec.analysis import CellTemperatureMetrics, RunAnalysis

__all__ = ["AnalysisView", "CellMetricsView", "analysis_view", "point_marks"]

_CellId = tuple[str, str | None, str | None, str]  # scenario, input, role, candidate


@dataclass(slots=True)
class CellMetricsView:
    """One candidate's temperature metrics in one scenario input and role."""

    candidate: str
    stability: str
    flake: str
    safety: str
    optimal: str
    sensitivity: str


@dataclass(slots=True)
class GapView:
    """One role gap."""

    candidate: str
    scenario: str
    roles: str
    gap: str
    interval: str
    clear: bool  # the interval excludes 0
    n: int
    criteria: str


@dataclass(slots=True)
class AnalysisView:
    """The run-wide analysis."""

    observations: list[str]
    recommended: list[tuple[str, str]]
    ranking: list[tuple[str, str]]
    similarity_method: str
    aggregation: str
    gaps: list[GapView]


def _num(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _temp(x: float | None, known: bool) -> str:
    return format_temperature(x) if known else "-"


def _metrics(cell: CellTemperatureMetrics, meaningful: bool = True) -> CellMetricsView:
    # "none" says it never fails: not when the scores are not meaningful
    scored = meaningful and any(p.mean is not None for p in cell.points)
    return CellMetricsView(
        candidate=cell.candidate,
        stability=_num(cell.stability),
        flake="none"
        if cell.flake_temperature is None and scored
        else (_temp(cell.flake_temperature, cell.flake_temperature is not None)),
        safety=_temp(cell.safety_ceiling, cell.safety_ceiling is not None),
        optimal=_temp(cell.optimal_temperature, cell.optimal_temperature is not None)
        + ("" if cell.optimal_temperature is None else f" (n={cell.compared_n})"),
        sensitivity=_num(cell.sensitivity),
    )


def point_marks(
    analysis: RunAnalysis,
) -> tuple[
    dict[tuple[_CellId, float | None], tuple[tuple[str, ...], str]],
    dict[_CellId, CellMetricsView],
]:
    """Marks and tooltips per (cell, temperature), and metrics per cell.

    Returns:
        ``((scenario, input, role, candidate), temperature) -> (marks, note)`` where marks
        are ``flaky``/``unstable`` and the note gives the spread, and
        ``(scenario, input, role, candidate) -> metrics``.
    """
    marks: dict[tuple[_CellId, float | None], tuple[tuple[str, ...], str]] = {}
    metrics: dict[_CellId, CellMetricsView] = {}
    for cell in analysis.cells:
        cid: _CellId = (cell.scenario, cell.input_id, cell.role, cell.candidate)
        metrics[cid] = _metrics(cell, analysis.scores_meaningful)
        for p in cell.points:
            found = tuple(m for m, on in (("flaky", p.flaky), ("unstable", p.unstable)) if on)
            note = f"{p.passed} passed, {p.failed} failed"
            if p.std is not None:
                note += f", std {p.std:.2f}"
            t = None if p.temperature is None else float(p.temperature)
            marks[(cid, t)] = (found, note)
    return marks, metrics


def analysis_view(analysis: RunAnalysis) -> AnalysisView:
    """The run-wide part of the analysis, ready to show."""
    gaps = [
        GapView(
            candidate=g.candidate,
            scenario=g.scenario if g.scenario is not None else "all scenarios",
            roles=f"{g.role_a} \u2212 {g.role_b}",
            gap=f"{g.gap:+.2f}",
            interval=(
                f"{g.ci_low:+.2f} to {g.ci_high:+.2f}"
                if g.ci_low is not None and g.ci_high is not None
                else f"none: too few pairs (at least {MIN_GAP_PAIRS})"
            ),
            clear=g.finding,
            n=g.n,
            criteria="; ".join(f"{name} {gap:+.1f}" for name, gap in g.criteria[:3]),
        )
        for g in analysis.role_gaps
    ]
    return AnalysisView(
        observations=list(analysis.observations),
        recommended=[
            (cand, NOT_MEANINGFUL if not analysis.scores_meaningful else format_recommendation(r))
            for cand, r in analysis.recommendations.items()
        ],
        ranking=[(cand, f"{s:.2f}") for cand, s in stability_ranking(analysis)],
        similarity_method=analysis.similarity_method,
        aggregation=analysis.aggregation,
        gaps=gaps,
    )
