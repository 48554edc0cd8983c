"""How well each judge (and a panel) agrees with people's labels, per criterion.

The judges of an answer's criterion are its evaluation records' own scores (a panel's
combined score, or the one judge's) and, where a record holds a panel, each member's score
(``details["panel"]``: ``{"judge", "model", "score", "passed", ...}``). People's value of an
(answer, criterion) is the mean of their scores, and their pass/fail the majority of their
verdicts (each as given, else its score against the judge's threshold; a tie gives none).

Per judge and criterion: Krippendorff's alpha (interval, on the scores; with a seeded
bootstrap 95% interval over the answers), Spearman's rho (ties ranked by their mean
rank), exact and within-1 agreement, and, on pass/fail, nominal alpha and the confusion.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from qualspec.analysis._agreement import TENTATIVE_ALPHA, alpha_with_interval, krippendorff_alpha
from qualspec.analysis._label_file import judged_records
from qualspec.analysis._stats import stat_seed
from qualspec.store import JudgmentRecord, LabelRecord, RunRecord

__all__ = [
    "MIN_LABELLED",
    "RELIABLE_ALPHA",
    "JudgeAgreement",
    "PeopleAgreement",
    "people_agreement",
    "spearman_rho",
]

RELIABLE_ALPHA = 0.8
"""Krippendorff's alpha for conclusions to rely on."""
MIN_LABELLED = 10
"""Fewest answers a judge and people both scored before a judge is recommended."""
_SAMPLES = 2000
_EPS = 1e-9

Item = tuple[str, str]  # (response key, criterion)


@dataclass(slots=True)
class JudgeAgreement:
    """One judge's agreement with people on one criterion.

    ``n``: the answers both scored (the score statistics' sample); ``n_verdicts``: those
    both gave pass/fail. ``confusion`` counts ``both_pass``, ``judge_only`` (the judge
    passed what people failed), ``people_only`` and ``both_fail``. ``unscored``: labelled
    answers this judge left without a score. Statistics the data cannot give are None.
    """

    criterion: str
    judge: str
    model: str | None
    n: int
    alpha: float | None
    alpha_ci: tuple[float, float] | None
    rho: float | None
    exact: float | None
    within_1: float | None
    n_verdicts: int
    alpha_pass: float | None
    confusion: dict[str, int]
    unscored: int


@dataclass(slots=True)
class PeopleAgreement:
    """Every judge's agreement with people on a run, per criterion, and whom to trust."""

    run_id: str
    labels: int
    answers: int
    labellers: list[str]
    judges: list[JudgeAgreement] = field(default_factory=list)
    people_alpha: dict[str, float | None] = field(default_factory=dict)
    trust: dict[str, str] = field(default_factory=dict)
    unmatched: int = 0  # labels of answers or criteria the run no longer judges


def _alpha_ci(judge: list[float], people: list[float], seed: int) -> tuple[float, float] | None:
    """The 95% bootstrap interval of the judge's alpha with people (two raters)."""
    result = alpha_with_interval([judge, people], "interval", samples=_SAMPLES, seed=seed)
    return None if result.low is None or result.high is None else (result.low, result.high)


def _ranks(values: Sequence[float]) -> Any:
    import numpy as np

    x = np.asarray(values, dtype=float)
    order = np.argsort(x, kind="mergesort")
    ranks = np.empty(len(x))
    ranks[order] = np.arange(1, len(x) + 1)
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=ranks)
    return (sums / counts)[inverse]


def spearman_rho(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Spearman's rank correlation, ties given their mean rank; None when either side has
    a single value (or fewer than 3 pairs)."""
    import numpy as np

    if len(a) != len(b) or len(a) < 3:
        return None
    ra, rb = _ranks(a), _ranks(b)
    if np.std(ra) == 0 or np.std(rb) == 0:
        return None
    return float(np.corrcoef(ra, rb)[0, 1])


@dataclass(slots=True)
class _Said:
    """What one judge said of one item."""

    score: float | None
    passed: bool | None


def _verdict(passed: Any, score: float | None, threshold: float | None) -> bool | None:
    if isinstance(passed, bool):
        return passed
    if score is not None and threshold is not None:
        return score >= threshold
    return None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _judges_of(j: JudgmentRecord) -> list[tuple[tuple[str, str | None], _Said]]:
    """(judge name, model) and what it said, for a record and its panel's members."""
    panel = (j.details or {}).get("panel")
    members = [m for m in panel if isinstance(m, Mapping)] if isinstance(panel, list) else []
    own_score = None if j.error is not None else j.score
    name = f"{j.evaluator} panel" if members else j.evaluator
    out = [((name, j.judge_model), _Said(own_score, _verdict(j.passed, own_score, j.threshold)))]
    for i, m in enumerate(members):
        score = _number(m.get("score"))
        member = str(m.get("judge") or m.get("model") or f"judge {i + 1}")
        model = m.get("model")
        out.append(
            (
                (f"{j.evaluator}: {member}", None if model is None else str(model)),
                _Said(score, _verdict(m.get("passed"), score, j.threshold)),
            )
        )
    return out


def _people(labels: Sequence[LabelRecord], threshold: float | None) -> _Said:
    scores = [x.score for x in labels if x.score is not None]
    verdicts = [v for x in labels if (v := _verdict(x.passed, x.score, threshold)) is not None]
    ayes = sum(verdicts)
    passed = None if not verdicts or 2 * ayes == len(verdicts) else 2 * ayes > len(verdicts)
    return _Said(sum(scores) / len(scores) if scores else None, passed)


def _agreement(
    criterion: str,
    judge: tuple[str, str | None],
    said: Mapping[Item, _Said],
    people: Mapping[Item, _Said],
) -> JudgeAgreement:
    items = [i for i in people if i[1] == criterion]
    scored = [
        i for i in items if people[i].score is not None and i in said and said[i].score is not None
    ]
    a = [float(said[i].score) for i in scored]  # type: ignore[arg-type]
    b = [float(people[i].score) for i in scored]  # type: ignore[arg-type]
    diffs = [abs(x - y) for x, y in zip(a, b, strict=True)]
    judged = [i for i in items if i in said and said[i].passed is not None]
    pairs = [
        (bool(said[i].passed), bool(people[i].passed))
        for i in judged
        if people[i].passed is not None
    ]
    confusion = {
        "both_pass": sum(1 for x, y in pairs if x and y),
        "judge_only": sum(1 for x, y in pairs if x and not y),
        "people_only": sum(1 for x, y in pairs if not x and y),
        "both_fail": sum(1 for x, y in pairs if not x and not y),
    }
    alpha = krippendorff_alpha([a, b]) if scored else None
    seed = stat_seed("people", criterion, *judge)
    return JudgeAgreement(
        criterion=criterion,
        judge=judge[0],
        model=judge[1],
        n=len(scored),
        alpha=alpha,
        alpha_ci=_alpha_ci(a, b, seed) if alpha is not None else None,
        rho=spearman_rho(a, b),
        exact=sum(d < _EPS for d in diffs) / len(diffs) if diffs else None,
        within_1=sum(d <= 1 + _EPS for d in diffs) / len(diffs) if diffs else None,
        n_verdicts=len(pairs),
        alpha_pass=(
            krippendorff_alpha(
                [[float(x) for x, _ in pairs], [float(y) for _, y in pairs]], "nominal"
            )
            if pairs
            else None
        ),
        confusion=confusion,
        unscored=sum(1 for i in items if i not in said or said[i].score is None),
    )


def _trust(criterion: str, rows: Sequence[JudgeAgreement]) -> str:
    """One line: which judge to trust for ``criterion``, and how far."""
    ready = [r for r in rows if r.n >= MIN_LABELLED and r.alpha is not None]
    if not ready:
        most = max((r.n for r in rows), default=0)
        return (
            f"too few labels to tell (at most {most} answers scored by a judge and people, "
            f"{MIN_LABELLED} needed): label more answers"
        )
    best = max(ready, key=lambda r: (r.alpha or 0.0, r.within_1 or 0.0))
    name = best.judge + (f" ({best.model})" if best.model else "")
    ci = f" [{best.alpha_ci[0]:.3f}, {best.alpha_ci[1]:.3f}]" if best.alpha_ci else ""
    shown = f"alpha {best.alpha:.3f}{ci}, n {best.n}"
    if best.alpha is not None and best.alpha >= RELIABLE_ALPHA:
        return f"trust {name}: {shown}"
    if best.alpha is not None and best.alpha >= TENTATIVE_ALPHA:
        return f"trust {name} tentatively: {shown} (below {RELIABLE_ALPHA})"
    return (
        f"trust no judge: the best, {name}, has {shown} (below {TENTATIVE_ALPHA}): keep "
        "people labelling this criterion, or sharpen its wording"
    )


def people_agreement(run: RunRecord, labels: Sequence[LabelRecord]) -> PeopleAgreement:
    """Each judge's agreement with people's ``labels`` of ``run``, per criterion."""
    said: dict[tuple[str, str | None], dict[Item, _Said]] = {}
    thresholds: dict[Item, float] = {}
    for j in judged_records(run.judgments):
        item = (j.response_key, j.criterion)
        if j.threshold is not None:
            thresholds.setdefault(item, j.threshold)
        for judge, what in _judges_of(j):
            said.setdefault(judge, {})[item] = what
    by_item: dict[Item, list[LabelRecord]] = {}
    for label in labels:
        by_item.setdefault((label.response_key, label.criterion), []).append(label)
    judged_items = {i for per in said.values() for i in per}
    people = {i: _people(ls, thresholds.get(i)) for i, ls in by_item.items() if i in judged_items}
    out = PeopleAgreement(
        run_id=run.summary.id,
        labels=len(labels),
        answers=len({k for k, _ in people}),
        labellers=sorted({x.labeller or "(unnamed)" for x in labels}),
        unmatched=sum(len(ls) for i, ls in by_item.items() if i not in judged_items),
    )
    labelled = {c for _, c in people}
    order = dict.fromkeys(c for per in said.values() for _, c in per if c in labelled)
    for criterion in order:
        rows = [
            _agreement(criterion, judge, per, people)
            for judge, per in said.items()
            if any(c == criterion for _, c in per)
        ]
        out.judges.extend(rows)
        out.trust[criterion] = _trust(criterion, rows)
        out.people_alpha[criterion] = _among_people(criterion, by_item)
    return out


def _among_people(criterion: str, by_item: Mapping[Item, Sequence[LabelRecord]]) -> float | None:
    """Interval alpha among the labellers on ``criterion`` (None: fewer than two labellers
    scored a common answer): how far people agree, the ceiling for any judge."""
    names = sorted({x.labeller for (_, c), ls in by_item.items() if c == criterion for x in ls})
    if len(names) < 2:
        return None
    items = [ls for (_, c), ls in by_item.items() if c == criterion]
    data = [
        [next((x.score for x in ls if x.labeller == name), None) for ls in items] for name in names
    ]
    return krippendorff_alpha(data)
