"""Console blocks of the temperature and role analysis (:func:`qualspec.analysis.analyze_run`).

Shown under the scenario tables when a run has several temperatures (per-cell metrics,
"Temperature stability: a > b", the recommended temperature, a stability chart) or several
roles (role gaps); the "Observations" block in both cases. Every name and sentence is
printed as literal text (never read as rich markup).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from qualspec.report._console_text import append_parts

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from qualspec.analysis import RunAnalysis, TemperaturePoint

__all__ = ["point_cell_text", "render_analysis", "stability_chart"]

_MARKERS = "●○◆◇■□▲△"
_CHART_ROWS = 10  # scores 10 .. 0
_MAX_GAP_CRITERIA = 3


def _score(value: float) -> str:
    return f"{value:.1f}" if value % 1 else f"{value:.0f}"


def point_cell_text(
    mean: float, passed: bool | None, point: TemperaturePoint | None, aggregation: str
) -> Text:
    """One cell of a Candidate(role) x Temperature table: the mean score (with its std under
    ``mean_with_variance``, the pass count under ``majority``) and the "(flaky)" and
    "(unstable)" marks; red when the temperature fails (``passed``, or the majority vote)."""
    from rich.text import Text

    text = f"{_score(mean)}/10"
    if point is not None:
        if aggregation == "mean_with_variance" and point.std is not None:
            text += f" ±{point.std:.1f}"
        elif aggregation == "majority" and point.passed + point.failed:
            text += f" ({point.passed}/{point.passed + point.failed} pass)"
            passed = point.majority_passed
        if point.flaky:
            text += " (flaky)"
        if point.unstable:
            text += " (unstable)"
    return Text(text, style="" if passed or passed is None else "red")


def stability_chart(curves: Mapping[str, Sequence[tuple[float, float]]]) -> list[str]:
    """A plain-text chart of score (0-10) against temperature, one line per candidate.

    Each candidate has its own marker (legend below the axis); points of one candidate are
    joined by ``─`` (level) or ``·`` (rising or falling). Empty with fewer than two
    temperatures.

    Example:
        >>> print("\\n".join(stability_chart({"a": [(0.0, 9.0), (1.0, 5.0)]})))
    """
    temps = sorted({t for points in curves.values() for t, _m in points})
    if len(temps) < 2:
        return []
    width = max(24, 6 * (len(temps) - 1) + 1)
    low, high = temps[0], temps[-1]

    def col(t: float) -> int:
        return round((t - low) / (high - low) * (width - 1))

    grid = [[" "] * width for _ in range(_CHART_ROWS + 1)]  # grid[0] is score 10

    def row(score: float) -> int:
        return _CHART_ROWS - max(0, min(_CHART_ROWS, round(score)))

    legend: list[str] = []
    for i, (name, points) in enumerate(curves.items()):
        marker = _MARKERS[i % len(_MARKERS)]
        legend.append(f"{marker} {name}")
        ordered = sorted(points)
        for (t0, m0), (t1, m1) in zip(ordered, ordered[1:], strict=False):
            c0, c1 = col(t0), col(t1)
            for c in range(c0 + 1, c1):
                score = m0 + (m1 - m0) * (c - c0) / (c1 - c0)
                r = row(score)
                if grid[r][c] == " ":
                    grid[r][c] = "─" if row(m0) == row(m1) else "·"
        for t, m in ordered:
            r, c = row(m), col(t)
            if grid[r][c] not in _MARKERS:
                grid[r][c] = marker
    lines = ["Score"]
    for r, cells in enumerate(grid):
        score = _CHART_ROWS - r
        label = f"{score:>2}" if score % 2 == 0 else "  "
        lines.append(f"{label} │ {''.join(cells)}".rstrip())
    lines.append("   └─" + "─" * width)
    axis = [" "] * (width + 8)
    for t in temps:
        label = f"{t:g}"
        start = min(col(t), width + 8 - len(label))
        if all(ch == " " for ch in axis[max(0, start - 1) : start + len(label)]):
            axis[start : start + len(label)] = label
    lines.append("     " + "".join(axis).rstrip() + "  Temperature")
    lines.append("     " + "   ".join(legend))
    return lines


def _temp(value: float | None) -> str:
    from qualspec.analysis import format_temperature

    return format_temperature(value)


def _metrics_table(analysis: RunAnalysis) -> object:
    from rich.table import Table
    from rich.text import Text

    roles = any(c.role is not None for c in analysis.cells)
    inputs = any(c.input_id is not None for c in analysis.cells)
    table = Table(title=Text("Temperature metrics"))
    table.add_column("Scenario")
    if inputs:
        table.add_column("Input")
    table.add_column("Candidate (role)" if roles else "Candidate")
    for name in ("Stability", "Flake temp", "Safety ceiling", "Optimal temp", "Sensitivity"):
        table.add_column(name, justify="right")

    def opt(value: float | None, fmt: str) -> str:
        return "-" if value is None else format(value, fmt)

    for c in analysis.cells:
        who = f"{c.candidate} ({c.role})" if c.role is not None else c.candidate
        row: list[str | Text] = [Text(c.scenario)]
        if inputs:
            row.append(Text(c.input_id or ""))
        row += [
            Text(who),
            opt(c.stability, ".2f"),
            "-" if c.flake_temperature is None else _temp(c.flake_temperature),
            "-" if c.safety_ceiling is None else _temp(c.safety_ceiling),
            "-"
            if c.optimal_temperature is None
            else f"{_temp(c.optimal_temperature)} (n={c.compared_n})",
            opt(c.sensitivity, ".2f"),
        ]
        table.add_row(*row)
    return table


def _several_temperatures(analysis: RunAnalysis) -> bool:
    return len({p.temperature for c in analysis.cells for p in c.points}) > 1


def render_analysis(analysis: RunAnalysis, console: Console) -> None:
    """Print the analysis blocks (see the module docstring); nothing for a run with one
    temperature and at most one role."""
    from rich.text import Text

    from qualspec.analysis import (
        NOT_MEANINGFUL,
        candidate_curves,
        format_recommendation,
        gap_interval,
        stability_ranking,
    )

    temps = _several_temperatures(analysis)
    if not temps and not analysis.role_gaps:
        return
    out = Text()

    def line(*parts: str | tuple[str, str]) -> None:
        if out:
            out.append("\n")
        append_parts(out, parts)

    if temps:
        console.print()
        console.print(_metrics_table(analysis))
        line(
            ("Stability:", "bold"),
            f" mean pairwise similarity ({analysis.similarity_method}) of the answers across "
            f"temperatures and runs; aggregation of runs: {analysis.aggregation}",
        )
        ranking = stability_ranking(analysis)
        if ranking:
            line(
                ("Temperature stability:", "bold"),
                " " + " > ".join(f"{c} ({s:.2f})" for c, s in ranking),
            )
        recommended = analysis.recommendations
        if not analysis.scores_meaningful:
            line(("Recommended temperature:", "bold"), f" {NOT_MEANINGFUL}")
        elif len(recommended) == 1:
            (rec,) = recommended.values()
            line(("Recommended temperature:", "bold"), f" {format_recommendation(rec)}")
        elif recommended:
            shown = "; ".join(f"{c} {format_recommendation(r)}" for c, r in recommended.items())
            line(("Recommended temperature:", "bold"), f" {shown}")
        chart = stability_chart(candidate_curves(analysis)) if analysis.scores_meaningful else []
        if chart:
            line()
            line(("Stability chart", "bold"), " (mean score per temperature)")
            for chart_line in chart:
                line(chart_line)
    if analysis.role_gaps:
        line()
        line(
            ("Role gaps", "bold"), " (score of the first role minus the second, 95% bootstrap CI):"
        )
        if not analysis.scores_meaningful:
            line(f"  {NOT_MEANINGFUL}: no gap below is a finding")
        for g in analysis.role_gaps:
            where = "" if g.scenario is None else f" [{g.scenario}]"
            top = ", ".join(f"{name} {gap:+.1f}" for name, gap in g.criteria[:_MAX_GAP_CRITERIA])
            line(
                f"  {g.candidate}{where}: {g.role_a} - {g.role_b} ",
                (f"{g.gap:+.1f}", "bold" if g.finding else ""),
                f" ({gap_interval(g)})",
                f"; largest on: {top}" if top else "",
            )
    if analysis.observations:
        line()
        line(("Observations:", "bold"))
        for sentence in analysis.observations:
            line(f"- {sentence}")
    console.print(out)
