"""``qualspec judge-check --judge A --judge B [--judge C] [--combine median]``: a judge
panel's calibration. Each judge scores the known pairs (cached as its own check), then the
combined panel is measured from their scores (no call of its own): does the panel separate
good answers from bad ones better than any one of its judges?"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qualspec.judges import Calibration

__all__ = ["panel_check"]


def panel_check(ns: argparse.Namespace, models: Sequence[str]) -> int:
    """Check every judge of the panel ``models`` and the combined panel; print the table."""
    from qualspec.engine import create_evaluator
    from qualspec.judges import combined_calibration
    from qualspec.providers import split_address
    from qualspec.spec import EvaluatorConfig, PanelMember

    for model in models:
        split_address(model)  # a malformed address is one line, exit 2
    config = EvaluatorConfig(
        type="criteria",
        panel=[PanelMember(model=m) for m in models],
        combine=ns.combine,
        mode=ns.mode,
    )
    panel = create_evaluator(config)  # a PanelJudge
    measured, combined = _measure(ns, panel, models, combined_calibration)
    if ns.json:
        out = {
            "members": {name: cal.summary() for name, cal in measured},
            "panel": combined.summary() | {"by_domain": combined.by_domain()},
        }
        sys.stdout.write(json.dumps(out) + "\n")
        return 0
    print(
        f"Panel calibration: {ns.combine} of {', '.join(models)} "
        f"({combined.n_pairs} known pairs, {combined.repeats} repeat(s))"
    )
    print(f"  {'judge':<32}{'separation':>11}{'mean gap':>10}{'unscored':>10}")
    for name, cal in [*measured, (f"panel ({ns.combine})", combined)]:
        gap = "n/a" if cal.mean_gap is None else f"{cal.mean_gap:+.1f}"
        print(f"  {name:<32}{cal.separation:>11.2f}{gap:>10}{cal.n_unscored:>10}")
    best_name, best = max(measured, key=lambda m: m[1].separation)
    if combined.separation > best.separation:
        how = f"better than its best judge ({best_name}, {best.separation:.2f})"
    elif combined.separation == best.separation:
        how = f"as well as its best judge ({best_name}, {best.separation:.2f})"
    else:
        how = f"worse than its best judge ({best_name}, {best.separation:.2f}): use that judge"
    print(f"The panel separates good from bad answers {how}.")
    for _, cal in [*measured, ("", combined)]:
        print(cal.verdict)
    return 0


def _measure(
    ns: argparse.Namespace, panel: Any, models: Sequence[str], combine: Any
) -> tuple[list[tuple[str, Calibration]], Calibration]:
    """Each member's check, then the panel's, in one recorded run."""
    import asyncio

    from qualspec.engine import Session, run_sync
    from qualspec.judges import calibrate
    from qualspec.providers import split_address

    async def main() -> tuple[list[tuple[str, Calibration]], Calibration]:
        async with Session(db=ns.db) as session:
            session.calls.providers(sorted({split_address(m)[0] for m in models}))
            described = {
                "kind": "judge_check",
                "judge": list(models),
                "combine": ns.combine,
                "mode": ns.mode,
                "pairs": ns.pairs,
                "repeats": ns.repeats,
            }
            title = f"judge-check panel {ns.combine} of {', '.join(models)}"
            async with session.recording(title, described) as run_id:
                found = await asyncio.gather(
                    *(
                        calibrate(session, judge, pairs=ns.pairs, repeats=ns.repeats)
                        for _, judge in panel.members
                    )
                )
                measured = [
                    (name, cal) for (name, _), cal in zip(panel.members, found, strict=True)
                ]
                combined = combine(panel, measured)
                summaries = {name: cal.summary() for name, cal in measured}
                await asyncio.to_thread(
                    session.store.update_run_metadata,
                    run_id,
                    {
                        "judge_calibration": {
                            panel.name: combined.summary() | {"members": summaries}
                        }
                    },
                )
            return measured, combined

    return run_sync(main)
