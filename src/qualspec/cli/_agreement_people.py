"""The "agreement with people" section of ``qualspec agreement``: each judge's and the
panel's agreement with the run's human labels, per criterion, and whom to trust."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qualspec.analysis import JudgeAgreement, PeopleAgreement
    from qualspec.store import RunRecord

__all__ = ["judge_vs_people", "people_lines"]


def judge_vs_people(run: RunRecord, db: str | None) -> tuple[list[str], dict[str, Any]]:
    """The judge-vs-people section: its text lines and its JSON part (``judge_vs_people``:
    None when nobody labelled the run). The labels are read from the store ``db``."""
    from qualspec.analysis import people_agreement
    from qualspec.store import Store

    with Store.open(db) as store:
        labels = store.labels(run.summary.id)
    report = people_agreement(run, labels) if labels else None
    data = None if report is None else dataclasses.asdict(report)
    return people_lines(report, run.summary.id), {"judge_vs_people": data}


def _num(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def _row(r: JudgeAgreement) -> str:
    judge = r.judge + (f" ({r.model})" if r.model else "")
    ci = f" [{r.alpha_ci[0]:.3f}, {r.alpha_ci[1]:.3f}]" if r.alpha_ci else ""
    c = r.confusion
    verdicts = (
        f"pass/fail alpha {_num(r.alpha_pass, 3)} n {r.n_verdicts}: both pass {c['both_pass']}, "
        f"judge only {c['judge_only']}, people only {c['people_only']}, "
        f"both fail {c['both_fail']}"
    )
    unscored = f"; {r.unscored} unscored by the judge" if r.unscored else ""
    return (
        f"  {judge}: n {r.n}, alpha {_num(r.alpha, 3)}{ci}, rho {_num(r.rho)}, "
        f"exact {_pct(r.exact)}, within 1 {_pct(r.within_1)}{unscored}\n    {verdicts}"
    )


def people_lines(report: PeopleAgreement | None, run_id: str) -> list[str]:
    """The section as text lines."""
    if report is None:
        return [
            "Judge vs people: no labels for this run. Export the answers "
            f"(`qualspec labels export {run_id} -o labels.csv`), fill in score and/or "
            f"passed, then `qualspec labels import {run_id} labels.csv`."
        ]
    lines = [
        f"Judge vs people: {report.labels} labels of {report.answers} answers by "
        f"{', '.join(report.labellers)}",
        "  people's value: the mean of their scores; pass/fail as given, else score >= the "
        "judge's threshold (majority); alpha: Krippendorff's (interval; 95% CI by bootstrap)",
    ]
    if report.unmatched:
        lines.append(f"  {report.unmatched} labels name answers or criteria no judge scored")
    for criterion, trust in report.trust.items():
        lines.append("")
        ceiling = report.people_alpha.get(criterion)
        lines.append(
            f"criterion {criterion}"
            + ("" if ceiling is None else f" (people among themselves: alpha {ceiling:.3f})")
        )
        lines.extend(_row(r) for r in report.judges if r.criterion == criterion)
        lines.append(f"  -> {trust}")
    return lines
