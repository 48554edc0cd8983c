"""SVG charts for the HTML report, drawn in Python: mean score against temperature.

The markup is plain SVG 1.1 inline in HTML (no ``xmlns`` needed, no script, no style
attributes: colours come from classes in the report's one style sheet), so a chart works
offline under the report's Content-Security-Policy. Every text is escaped here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from qualspec.analysis import format_temperature as temperature_label

__all__ = ["Series", "score_chart"]

_W, _H = 560, 260  # the plot's viewBox (legend below it)
_LEFT, _RIGHT, _TOP, _BOTTOM = 44, 16, 14, 40
_LEGEND_ROW = 18
_LEGEND_GAP = 10  # between the axis title and the legend
N_COLOURS = 8  # .c0 .. .c7 in the style sheet; more series reuse them with a dash pattern


@dataclass(frozen=True, slots=True)
class Series:
    """One line: a label and its (temperature, mean score) points (score None: no score)."""

    label: str
    points: tuple[tuple[float | None, float | None], ...]


def _sort_key(t: float | None) -> tuple[int, float]:
    return (0, 0.0) if t is None else (1, t)


def _fmt(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".") if x % 1 else f"{x:.0f}"


def score_chart(series: Sequence[Series], *, title: str) -> str:
    """An SVG line chart of score (0-10) against temperature, one line per series.

    Temperatures are placed by value when all are numbers, evenly (as categories) when
    one is ``default``. A point without a score breaks its line: each run of consecutive
    scored points is one ``polyline`` inside the series' ``<g class="series">``; each point
    is a circle with a ``<title>`` tooltip. Earlier series are drawn wider, so that lines
    that coincide still show every colour.

    Args:
        series: The lines, in legend order.
        title: The chart's accessible title (escaped).

    Returns:
        The ``<svg>`` element as a string.
    """
    axes = _Axes(sorted({t for s in series for t, _ in s.points}, key=_sort_key))
    legend_h = _LEGEND_ROW * ((len(series) + 1) // 2) + 8 + _LEGEND_GAP
    height = _H + legend_h
    out = [
        f'<svg class="chart" viewBox="0 0 {_W} {height}" role="img" '
        f'aria-label="{escape(title)}"><title>{escape(title)}</title>'
    ]
    out.extend(_axis_markup(axes))
    for i, s in enumerate(series):
        out.extend(_series_markup(axes, s, i, len(series)))
    out.extend(_legend_markup(series))
    return "".join(out)


class _Axes:
    """Where a temperature and a score are drawn."""

    def __init__(self, temps: list[float | None]) -> None:
        self.temps = temps
        self.plot_w = _W - _LEFT - _RIGHT
        self.plot_h = _H - _TOP - _BOTTOM
        self.numeric = [t for t in temps if t is not None]
        numeric = self.numeric
        self.by_value = (
            len(numeric) == len(temps) and len(temps) > 1 and max(numeric) > min(numeric)
        )

    def x_of(self, t: float | None) -> float:
        temps, plot_w = self.temps, self.plot_w
        if len(temps) <= 1:
            return _LEFT + plot_w / 2
        if self.by_value and t is not None:
            lo, hi = min(self.numeric), max(self.numeric)
            return _LEFT + (t - lo) / (hi - lo) * plot_w
        return _LEFT + temps.index(t) / (len(temps) - 1) * plot_w

    def y_of(self, score: float) -> float:
        return _TOP + (1 - max(0.0, min(10.0, score)) / 10) * self.plot_h


def _axis_markup(axes: _Axes) -> list[str]:
    """The grid, the ticks and the axis titles."""
    plot_w, plot_h = axes.plot_w, axes.plot_h
    out = ['<g class="axis">']
    for score in (0, 2, 4, 6, 8, 10):
        y = axes.y_of(score)
        out.append(
            f'<line class="grid" x1="{_LEFT}" y1="{y:.1f}" x2="{_W - _RIGHT}" y2="{y:.1f}"/>'
            f'<text x="{_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{score}</text>'
        )
    base = _TOP + plot_h
    for t in axes.temps:
        x = axes.x_of(t)
        out.append(
            f'<line class="tick" x1="{x:.1f}" y1="{base}" x2="{x:.1f}" y2="{base + 5}"/>'
            f'<text x="{x:.1f}" y="{base + 18}" text-anchor="middle">'
            f"{escape(temperature_label(t))}</text>"
        )
    out.append(
        f'<text class="label" x="{_LEFT + plot_w / 2:.1f}" y="{base + 34}" '
        'text-anchor="middle">temperature</text>'
        f'<text class="label" x="12" y="{_TOP + plot_h / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 12 {_TOP + plot_h / 2:.1f})">mean score</text>'
    )
    out.append("</g>")
    return out


def _series_markup(axes: _Axes, s: Series, i: int, n: int) -> list[str]:
    """Series ``i`` of ``n``: its lines (broken where a point has no score) and points."""
    colour = f"c{i % N_COLOURS}" + (" dashed" if i >= N_COLOURS else "")
    # earlier lines are wider, so that lines that coincide still show each colour
    wider = (n - 1 - i) / max(n - 1, 1)
    width, radius = 2.0 + 3.0 * wider, 3.0 + 2.5 * wider
    out = [
        f'<g class="series {colour}" data-series="{escape(s.label)}" stroke-width="{width:.1f}">'
    ]
    runs: list[list[tuple[float, float]]] = [[]]
    for temp, value in sorted(s.points, key=lambda p: _sort_key(p[0])):
        if value is None:
            runs.append([])
            continue
        runs[-1].append((axes.x_of(temp), axes.y_of(value)))
    for run in runs:
        if len(run) > 1:
            pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in run)
            out.append(f'<polyline points="{pts}"/>')
    for temp, value in s.points:
        if value is None:
            continue
        tip = f"{s.label} at {temperature_label(temp)}: {_fmt(value)}/10"
        out.append(
            f'<circle cx="{axes.x_of(temp):.1f}" cy="{axes.y_of(value):.1f}" r="{radius:.1f}">'
            f"<title>{escape(tip)}</title></circle>"
        )
    out.append("</g>")
    return out


def _legend_markup(series: Sequence[Series]) -> list[str]:
    """The legend, in two columns, closing the chart."""
    plot_w = _W - _LEFT - _RIGHT
    out = ['<g class="legend">']
    for i, s in enumerate(series):
        col, row = i % 2, i // 2
        x = _LEFT + col * (plot_w / 2)
        y = _H + _LEGEND_GAP + row * _LEGEND_ROW
        colour = f"c{i % N_COLOURS}" + (" dashed" if i >= N_COLOURS else "")
        out.append(
            f'<g class="{colour}"><line x1="{x:.1f}" y1="{y:.1f}" x2="{x + 22:.1f}" '
            f'y2="{y:.1f}"/><text x="{x + 28:.1f}" y="{y + 4:.1f}">{escape(s.label)}</text></g>'
        )
    out.append("</g></svg>")
    return out
