"""``qualspec agreement RUN``: how far a run's judges agree with each other and with
people, per criterion.

One function per section, each giving its text lines and its JSON part: judge vs judge
(the members of each judge panel: Krippendorff's alpha of the scores and of the pass/fail
verdicts with a 95% interval and the items, and each pair's exact and within-1
agreement; a criterion whose alpha is below 0.667 is flagged), and judge vs people
(``_agreement_people``: each judge's and the panel's agreement with the run's human
labels, and which judge to trust for which criterion).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from qualspec.cli._args import Commands, add_db
from qualspec.cli._history import _load

if TYPE_CHECKING:
    from qualspec.analysis import CriterionAgreement, PanelAgreement
    from qualspec.store import RunRecord

__all__ = ["add_parser", "cmd_agreement", "judge_vs_judge"]


def add_parser(commands: Commands) -> None:
    """``qualspec agreement RUN [--format text|json]``."""
    agreement = commands.add_parser(
        "agreement",
        help="per criterion: how far a run's judges agree with each other (a judge panel) "
        "and with people's labels (Krippendorff's alpha, rho, exact/within-1, pass/fail), "
        "and which judge to trust",
    )
    agreement.add_argument(
        "run_id", metavar="RUN", help="run id, unique id prefix, or results .json"
    )
    agreement.add_argument("--format", choices=["text", "json"], default="text")
    add_db(agreement)
    agreement.set_defaults(handler=cmd_agreement)


def cmd_agreement(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Print each section of the run's agreement."""
    from qualspec.cli._agreement_people import judge_vs_people

    run = _load(ns.run_id, ns.db)
    lines, data = judge_vs_judge(run)
    people_lines, people_data = judge_vs_people(run, ns.db)
    lines, data = [*lines, *people_lines], {**data, **people_data}
    if ns.format == "json":
        out = {"run_id": run.summary.id, "suite": run.summary.suite_name, **data}
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return 0
    head = f"Agreement in run {run.summary.id} (suite {run.summary.suite_name})"
    sys.stdout.write("\n".join([head, "", *lines]) + "\n")
    return 0


def judge_vs_judge(run: RunRecord) -> tuple[list[str], dict[str, Any]]:
    """The judge-vs-judge section: its text lines and its JSON part (``judge_vs_judge``:
    one entry per panel, as the results file's ``judge_agreement``)."""
    from qualspec.analysis import judge_agreement

    panels = judge_agreement(run.judgments)
    data: dict[str, Any] = {"judge_vs_judge": [p.as_dict() for p in panels]}
    if not panels:
        return [
            "Judge vs judge: this run has no judge panel (give judge: {panel: [{model: ...}, "
            "...]} in the suite to have several judges score every answer)"
        ], data
    lines: list[str] = []
    for panel in panels:
        lines += _panel_lines(panel)
    return lines, data


def _panel_lines(panel: PanelAgreement) -> list[str]:
    basis = "scores" if panel.overall.basis == "scores" else "pass/fail votes (majority)"
    lines = [
        f"Judge vs judge: {panel.evaluator} ({panel.combine} of {', '.join(panel.judges)})",
        f"  Krippendorff's alpha, 95% bootstrap CI; flagged below 0.667 on the {basis}",
    ]
    width = max(len(c.criterion or "") for c in panel.criteria)
    width = max(width, len("overall"), len("criterion"))
    lines.append(f"  {'criterion':<{width}}  {'scores (interval)':<28}  pass/fail (nominal)")
    for c in (*panel.criteria, panel.overall):
        name = c.criterion if c.criterion is not None else "overall"
        flag = "  FLAGGED" if c.flagged else ""
        lines.append(f"  {name:<{width}}  {c.scores.text():<28}  {c.verdicts.text()}{flag}")
    scored = ", ".join(f"{name} {n}" for name, n in panel.scored)
    lines.append(f"  Items scored of {panel.items}: {scored} (an unscored item is left out)")
    lines.append("  Pairs of judges (exact / within 1 point, over the items both scored):")
    for c in (*panel.criteria, panel.overall):
        lines.append(f"    {c.criterion if c.criterion is not None else 'overall'}: {_pairs(c)}")
    if panel.flagged:
        lines.append(
            f"  {len(panel.flagged)} flagged: the judges do not agree enough on "
            f"{', '.join(panel.flagged)} to rely on their scores"
        )
    lines.append("")
    return lines


def _pairs(c: CriterionAgreement) -> str:
    parts = []
    for p in c.pairs:
        if p.exact is None or p.within_one is None:
            parts.append(f"{p.a} ~ {p.b}: no item both scored")
        else:
            parts.append(f"{p.a} ~ {p.b}: {p.exact:.0%} / {p.within_one:.0%} of {p.n}")
    return "; ".join(parts)
