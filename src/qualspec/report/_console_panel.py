"""The console's view of a judge panel: each candidate line's spread over the judges
(``7/10 (6-8, 3 judges)``) and the agreement between the judges per criterion, the
criteria whose alpha is below 0.667 flagged. Names are printed as literal text."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING

from qualspec.report._optional_blocks import has_panel

if TYPE_CHECKING:
    from rich.console import Console

    from qualspec.analysis import PanelAgreement
    from qualspec.store import RunRecord

__all__ = ["panel_spreads", "render_agreement"]

Row = tuple[str, str | None, str | None, str]


def panel_spreads(run: RunRecord) -> dict[Row, str]:
    """Per candidate line (scenario, input, role, candidate) judged by a panel: the range
    of what each judge alone gave it (the mean of its scores over the line's judgments)
    and how many judges scored, as ``6-8, 3 judges`` (``6-8, 2 of 3 judges`` when one
    never scored)."""
    if not has_panel(run):
        return {}  # no panel: the agreement module stays unimported
    from qualspec.analysis import cell_key, panel_members_of

    rows: dict[str, Row] = {}
    for r in run.responses:
        if r.kind == "candidate":
            scenario, input_id, role, candidate, _ = cell_key(r)
            rows[r.key] = (scenario, input_id, role, candidate)
    by_row: dict[Row, dict[str, list[float]]] = {}
    panel: dict[Row, set[str]] = {}  # every member, scored or not
    for j in run.judgments:
        row = rows.get(j.response_key)
        members = panel_members_of(j)
        if row is None or j.superseded or not members:
            continue
        scores = by_row.setdefault(row, {})
        panel.setdefault(row, set()).update(m["judge"] for m in members)
        for m in members:
            if isinstance(m.get("score"), int | float):
                scores.setdefault(m["judge"], []).append(float(m["score"]))
    out: dict[Row, str] = {}
    for row, by_judge in by_row.items():
        if not by_judge:
            continue
        means = [statistics.fmean(v) for v in by_judge.values()]
        low, high = _num(min(means)), _num(max(means))
        spread = low if low == high else f"{low}-{high}"
        size = len(panel[row])
        judges = f"{len(means)} of {size} judges" if len(means) < size else f"{size} judges"
        out[row] = f"{spread}, {judges}"
    return out


def _num(value: float) -> str:
    return f"{value:.1f}" if value % 1 else f"{value:.0f}"


def agreement_lines(panels: Sequence[PanelAgreement]) -> list[tuple[str, bool]]:
    """The agreement block's lines, each with whether it is flagged (for its style)."""
    lines: list[tuple[str, bool]] = []
    for panel in panels:
        basis = "scores" if panel.overall.basis == "scores" else "pass/fail (majority)"
        lines.append(
            (
                f"Agreement between judges ({panel.evaluator}: {', '.join(panel.judges)}; "
                f"Krippendorff's alpha, 95% CI, flagged below 0.667 on {basis})",
                False,
            )
        )
        for c in (*panel.criteria, panel.overall):
            name = c.criterion if c.criterion is not None else "overall"
            flag = "  FLAGGED: the judges do not agree enough to rely on" if c.flagged else ""
            lines.append(
                (
                    f"  {name}: scores {c.scores.text()}; pass/fail {c.verdicts.text()}{flag}",
                    c.flagged,
                )
            )
    return lines


def render_agreement(run: RunRecord, console: Console) -> None:
    """Print the agreement between each panel's judges (nothing without a panel)."""
    if not has_panel(run):
        return
    from rich.text import Text

    from qualspec.analysis import judge_agreement

    panels = judge_agreement(run.judgments)
    if not panels:
        return
    console.print()
    for n, (line, flagged) in enumerate(agreement_lines(panels)):
        style = "bold" if n == 0 or line.startswith("Agreement") else ("yellow" if flagged else "")
        console.print(Text(line, style=style))
