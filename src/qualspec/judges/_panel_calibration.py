"""A judge panel's calibration: each member measured on the known pairs as a judge of its
own (cached per member), and the combined panel's separation from the members' scores of
the same pairs (no call of its own): does the panel separate good from bad answers better
than any one of its judges?"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from qualspec.judges._calibration import measured_calibration
from qualspec.judges._calibration_result import Calibration, PairScores, calibration_of
from qualspec.judges._panel_scores import combine_scores

if TYPE_CHECKING:
    from qualspec.engine import PrepareContext
    from qualspec.judges import PanelJudge  # the package's name: no file cycle

__all__ = ["combined_calibration", "prepare_panel_calibration"]


def combined_calibration(
    panel: PanelJudge, measured: Sequence[tuple[str, Calibration]]
) -> Calibration:
    """The combined panel's measurement: each known answer's score combined over the
    members that scored it (``panel.combine``), pair by pair (the pairs of the first
    member's measurement; a pair another member lacks is combined without it)."""
    threshold = panel.threshold if panel.threshold is not None else 7.0
    by_member = [{p.id: p for p in cal.pairs} for _, cal in measured]
    repeats = min(cal.repeats for _, cal in measured)
    pairs: list[PairScores] = []
    for first in measured[0][1].pairs:
        found = [m[first.id] for m in by_member if first.id in m]

        def side(values: Sequence[Sequence[float | None]]) -> list[float | None]:
            out: list[float | None] = []
            for r in range(repeats):
                scores = [v[r] for v in values if r < len(v) and v[r] is not None]
                out.append(combine_scores(panel.combine, scores, threshold)[0])  # type: ignore[arg-type]
            return out

        good = side([p.good for p in found])
        bad = side([p.bad for p in found])
        pairs.append(PairScores(first.id, first.domain, good, bad))
    _, prompt = panel.prompt()
    return calibration_of(panel.label, prompt, pairs, repeats=repeats)


async def prepare_panel_calibration(
    panel: PanelJudge, ctx: PrepareContext
) -> dict[str, Any] | None:
    """The panel's ``prepare``: the combined panel's summary (what a run's judge check
    reports) with each member's under ``members``; a member or a panel whose scores are not
    meaningful is a warning."""
    if not ctx.calibrate:
        return None
    found = await asyncio.gather(*(measured_calibration(j, ctx) for _, j in panel.members))
    measured = [(name, cal) for (name, _), cal in zip(panel.members, found, strict=True) if cal]
    members = {name: cal.summary() for name, cal in measured}
    for summary in members.values():
        if not summary["meaningful"]:
            ctx.warn(summary["verdict"])
    if not measured:
        return None
    summary = combined_calibration(panel, measured).summary()
    if not summary["meaningful"]:
        ctx.warn(summary["verdict"])
    return {**summary, "members": members}
