"""How far the judges of a panel agree, per criterion and overall (what ``qualspec
agreement``, the run's report, the results file and ``insights`` show).

Each judgment of a panel keeps every member's score under ``details["panel"]``; the items
rated are the (answer, criterion) pairs, the raters the members. Per criterion and over
every criterion: Krippendorff's alpha of the 0-10 scores (interval) and of the pass/fail
verdicts (nominal), each with a bootstrap 95% interval and its number of items, and each
pair of members' exact and within-1 agreement. A criterion is flagged when the alpha that
the panel combines is below 0.667: the scores' (median, mean, min), or the verdicts'
(majority).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from qualspec.analysis._agreement import (
    AGREEMENT_SAMPLES,
    AlphaResult,
    PairAgreement,
    alpha_with_interval,
    pairwise_agreement,
)
from qualspec.analysis._stats import stat_seed

if TYPE_CHECKING:
    from qualspec.analysis._insight_rules import Insight
    from qualspec.store import JudgmentRecord, RunRecord

__all__ = [
    "CriterionAgreement",
    "PanelAgreement",
    "agreement_insights",
    "judge_agreement",
    "panel_members_of",
]


@dataclass(frozen=True, slots=True)
class CriterionAgreement:
    """The judges' agreement on one criterion (``criterion`` None: over all of them)."""

    criterion: str | None
    scores: AlphaResult
    verdicts: AlphaResult
    pairs: tuple[PairAgreement, ...]
    basis: str = "scores"

    @property
    def alpha(self) -> AlphaResult:
        """The alpha that decides the flag: the scores', or the verdicts' (majority)."""
        return self.verdicts if self.basis == "verdicts" else self.scores

    @property
    def flagged(self) -> bool:
        """Whether that alpha is below 0.667 (too little agreement to rely on)."""
        return self.alpha.flagged

    def as_dict(self) -> dict[str, Any]:
        """The results file's form."""
        return {
            "criterion": self.criterion,
            "scores": self.scores.as_dict(),
            "verdicts": self.verdicts.as_dict(),
            "pairs": [p.as_dict() for p in self.pairs],
            "flagged": self.flagged,
        }


@dataclass(frozen=True, slots=True)
class PanelAgreement:
    """One panel's agreement: per criterion (sorted by name) and overall."""

    evaluator: str
    combine: str
    judges: tuple[str, ...]
    criteria: tuple[CriterionAgreement, ...]
    overall: CriterionAgreement
    scored: tuple[tuple[str, int], ...] = ()
    """Per judge: the items it scored (of :attr:`items`); a judge that never scores has 0."""
    items: int = 0

    @property
    def flagged(self) -> list[str]:
        """The criteria whose alpha is below 0.667."""
        return [c.criterion for c in self.criteria if c.flagged and c.criterion is not None]

    def as_dict(self) -> dict[str, Any]:
        """The results file's form (``agreement`` of its ``analysis``)."""
        return {
            "evaluator": self.evaluator,
            "combine": self.combine,
            "judges": list(self.judges),
            "basis": self.overall.basis,
            "criteria": [c.as_dict() for c in self.criteria],
            "overall": self.overall.as_dict(),
            "flagged": self.flagged,
            "items": self.items,
            "scored": dict(self.scored),
        }


def panel_members_of(judgment: JudgmentRecord) -> list[Mapping[str, Any]]:
    """A judgment's panel members (``details["panel"]``), or none: not a panel's."""
    details = judgment.details or {}
    members = details.get("panel")
    if not isinstance(members, list):
        return []
    return [m for m in members if isinstance(m, Mapping) and isinstance(m.get("judge"), str)]


def _table(
    units: Sequence[tuple[str, str]],
    by_unit: Mapping[tuple[str, str], Mapping[str, Mapping[str, Any]]],
    judges: Sequence[str],
    field: str,
) -> list[list[float | None]]:
    """Judges x units: each member's ``score`` (or ``passed`` as 1/0), None: not given."""
    rows: list[list[float | None]] = []
    for judge in judges:
        row: list[float | None] = []
        for unit in units:
            value = by_unit[unit].get(judge, {}).get(field)  # bool: True is 1.0
            row.append(float(value) if isinstance(value, int | float) else None)
        rows.append(row)
    return rows


def _criterion(
    name: str | None,
    units: Sequence[tuple[str, str]],
    by_unit: Mapping[tuple[str, str], Mapping[str, Mapping[str, Any]]],
    judges: Sequence[str],
    *,
    basis: str,
    samples: int,
    seed_names: Sequence[str | None],
) -> CriterionAgreement:
    scores = _table(units, by_unit, judges, "score")
    verdicts = [
        [None if v is None else float(v) for v in row]
        for row in _table(units, by_unit, judges, "passed")
    ]
    seed = stat_seed("agreement", *seed_names)
    return CriterionAgreement(
        criterion=name,
        scores=alpha_with_interval(scores, "interval", samples=samples, seed=seed),
        verdicts=alpha_with_interval(verdicts, "nominal", samples=samples, seed=seed + 1),
        pairs=tuple(pairwise_agreement(judges, scores)),
        basis=basis,
    )


def judge_agreement(
    judgments: Iterable[JudgmentRecord],
    *,
    combine: Mapping[str, str] | None = None,
    samples: int = AGREEMENT_SAMPLES,
) -> list[PanelAgreement]:
    """The agreement of every panel among ``judgments`` (a run's), one per evaluator with
    a panel, per criterion (sorted by name) and overall. ``combine``: each panel's
    combination by evaluator name (else read from its judgments' ``details``)."""
    panels: dict[str, dict[tuple[str, str], dict[str, Mapping[str, Any]]]] = {}
    judges: dict[str, dict[str, None]] = {}
    how: dict[str, str] = dict(combine or {})
    for j in judgments:
        members = panel_members_of(j)
        if j.superseded or not members:
            continue
        unit = (j.response_key, j.criterion)
        panels.setdefault(j.evaluator, {})[unit] = {m["judge"]: m for m in members}
        judges.setdefault(j.evaluator, {}).update(dict.fromkeys(m["judge"] for m in members))
        found = (j.details or {}).get("combine")
        if isinstance(found, str):
            how.setdefault(j.evaluator, found)
    out: list[PanelAgreement] = []
    for evaluator, by_unit in panels.items():
        names = list(judges[evaluator])
        method = how.get(evaluator, "median")
        basis = "verdicts" if method == "majority" else "scores"
        criteria = sorted({c for _, c in by_unit})  # the same order in every report
        per = tuple(
            _criterion(
                c,
                [u for u in by_unit if u[1] == c],
                by_unit,
                names,
                basis=basis,
                samples=samples,
                seed_names=(evaluator, c),
            )
            for c in criteria
        )
        overall = _criterion(
            None,
            list(by_unit),
            by_unit,
            names,
            basis=basis,
            samples=samples,
            seed_names=(evaluator, None),
        )
        scored = tuple(
            (n, sum(isinstance(m.get(n, {}).get("score"), int | float) for m in by_unit.values()))
            for n in names
        )
        out.append(
            PanelAgreement(evaluator, method, tuple(names), per, overall, scored, len(by_unit))
        )
    return out


def agreement_insights(run: RunRecord) -> list[Insight]:
    """``judges_disagree``: per panel, its criteria whose alpha is below 0.667."""
    # here, not at the top: the results file reads the agreement without the insights
    from qualspec.analysis._insight_rules import Insight

    out: list[Insight] = []
    for panel in judge_agreement(run.judgments):
        flagged = [c for c in panel.criteria if c.flagged]
        if not flagged:
            continue
        what = "scores" if panel.overall.basis == "scores" else "pass/fail verdicts"
        out.append(
            Insight(
                kind="judges_disagree",
                severity="high",
                finding=f"The judges of {panel.evaluator!r} disagree on "
                f"{len(flagged)} of {len(panel.criteria)} criteria (Krippendorff's alpha of "
                f"their {what} below 0.667).",
                action="Do not rely on these criteria's scores: make each criterion more "
                "concrete (what earns a 10, what a 0), or give the panel a stronger judge; "
                "see qualspec agreement RUN.",
                evidence=tuple(f"{c.criterion}: alpha {c.alpha.text()}" for c in flagged),
                data={"evaluator": panel.evaluator, "flagged": [c.criterion for c in flagged]},
            )
        )
    return out
