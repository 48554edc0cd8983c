"""The insights of :mod:`qualspec.analysis._insights` and the rules that find each kind, read
from a run's field grades or criteria judgments."""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from qualspec.analysis._aggregate import CHECKS_EVALUATOR
from qualspec.analysis._compare import CompareSource, UnitKey
from qualspec.store import RunRecord

InsightKind = Literal[
    "low_accuracy",
    "failing_field",
    "model_specific",
    "hard_input",
    "output_format",
    "inconsistent_grading",
    "reference_changed",
    "judges_disagree",
]
GAP_POINTS = 10.0
"""How far (points of 100) a candidate or input must be below the others to be cited."""
MIN_ANSWERS = 2
"""A field must fail in at least this many answers (all of them) to "always fail"."""
LOW_SHARE = 0.7  # below 70% of the scale: "Needs improvement"


@dataclass(frozen=True, slots=True)
class Insight:
    """One recommendation: what the data show, what to do, and the evidence.

    Attributes:
        kind: The pattern (see the module docstring).
        severity: ``high`` or ``medium``.
        finding: What the data show, one sentence.
        action: What to do about it.
        evidence: The numbers behind it, one line each (fields, inputs, models).
        data: The same numbers for programs.
    """

    kind: InsightKind
    severity: Literal["high", "medium"]
    finding: str
    action: str
    evidence: tuple[str, ...] = ()
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RunInsights:
    """The insights of one run, most severe first."""

    run_id: str
    suite: str
    source: CompareSource
    scale: int
    mean: float | None
    answers: int
    insights: tuple[Insight, ...]


def _fmt(value: float, scale: int) -> str:
    return f"{value:.1f}" if scale == 100 else f"{value:.2f}"


def _answer_scores(run: RunRecord, source: CompareSource) -> dict[str, float]:
    """Response key -> its score (a field grade's weighted mean; the criteria's mean)."""
    from qualspec.judges import is_field_grade

    out: dict[str, list[float]] = {}
    for j in run.judgments:
        if j.score is None or j.error is not None:
            continue
        graded = is_field_grade(j)
        if source == "field_grades" and graded:
            out.setdefault(j.response_key, []).append(j.score)
        elif source == "criteria" and not graded and j.evaluator != CHECKS_EVALUATOR:
            if not (isinstance(j.details, dict) and j.details.get("type") == "comparison"):
                out.setdefault(j.response_key, []).append(j.score)
    return {k: statistics.fmean(v) for k, v in out.items()}


def _thresholds(run: RunRecord, source: CompareSource) -> float:
    from qualspec.judges import is_field_grade

    found = [
        j.threshold
        for j in run.judgments
        if j.threshold is not None and is_field_grade(j) == (source == "field_grades")
    ]
    return max(found) if found else (80.0 if source == "field_grades" else 7.0)


def _mean_by(units: Mapping[UnitKey, float], index: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for key, value in units.items():
        name = key[index] if index != 3 else _input(key)
        out.setdefault(str(name), []).append(value)
    return out


def _input(key: UnitKey) -> str:
    return key[2] if key[3] is None else f"{key[2]}/{key[3]}"


def _worst_aspects(units: Mapping[UnitKey, float], keep: Any, scale: int, n: int = 3) -> str:
    per: dict[str, list[float]] = {}
    for key, value in units.items():
        if keep(key):
            per.setdefault(key[5], []).append(value)
    ranked = sorted((statistics.fmean(v), name) for name, v in per.items())[:n]
    return ", ".join(f"{name} {_fmt(mean, scale)}" for mean, name in ranked)


def _low_accuracy(mean: float, answers: int, scale: int, run: RunRecord) -> list[Insight]:
    from qualspec.judges import is_field_grade

    if mean >= LOW_SHARE * scale:
        return []
    evidence = [f"mean score {_fmt(mean, scale)} of {scale} over {answers} graded answers"]
    statuses: dict[str, int] = {}
    for j in run.judgments:
        status = (j.details or {}).get("reference_status") if is_field_grade(j) else None
        if isinstance(status, str):
            statuses[status] = statuses.get(status, 0) + 1
    if statuses:
        evidence.append(
            "reference answers: "
            + ", ".join(f"{n} {status}" for status, n in sorted(statuses.items()))
        )
    return [
        Insight(
            kind="low_accuracy",
            severity="high",
            finding=f"Overall accuracy is low: {_fmt(mean, scale)} of {scale} "
            f"(below {_fmt(LOW_SHARE * scale, scale)}).",
            action="Revise the prompt fundamentally; first check that the reference answers "
            "are correct (qualspec reference list) and that the task is not too complex."
            if statuses
            else "Revise the prompt fundamentally; first check that the criteria ask for "
            "the right thing and that the judge can be trusted (qualspec judge-check).",
            evidence=tuple(evidence),
            data={"mean": mean, "answers": answers, "reference_status": statuses},
        )
    ]


def _failing_fields(
    units: Mapping[UnitKey, float], threshold: float, scale: int, noun: str
) -> list[Insight]:
    out: list[Insight] = []
    for name, values in _mean_by(units, 5).items():
        if len(values) < MIN_ANSWERS or any(v >= threshold for v in values):
            continue
        inputs = sorted({_input(k) for k in units if k[5] == name})
        mean = statistics.fmean(values)
        out.append(
            Insight(
                kind="failing_field",
                severity="high",
                finding=f"The {noun} '{name}' fails in every answer ({len(values)} of "
                f"{len(values)} below {_fmt(threshold, scale)}).",
                action=f"Add instructions and an example for '{name}' to the prompt.",
                evidence=(
                    f"mean {_fmt(mean, scale)}, best {_fmt(max(values), scale)}, "
                    f"threshold {_fmt(threshold, scale)}",
                    f"inputs: {', '.join(inputs)}",
                ),
                data={"name": name, "mean": mean, "answers": len(values), "inputs": inputs},
            )
        )
    return sorted(out, key=lambda i: i.data["mean"])


def _gaps(
    units: Mapping[UnitKey, float], index: int, scale: int
) -> list[tuple[str, float, float, list[float]]]:
    """(name, its mean, the others' mean, its values) for names far below the others."""
    groups = _mean_by(units, index)
    if len(groups) < 2:
        return []
    gap = GAP_POINTS * scale / 100
    out = []
    for name, values in groups.items():
        others = [v for other, vs in groups.items() if other != name for v in vs]
        mine, rest = statistics.fmean(values), statistics.fmean(others)
        if rest - mine >= gap:
            out.append((name, mine, rest, values))
    return sorted(out, key=lambda t: t[1] - t[2])


def _model_specific(units: Mapping[UnitKey, float], scale: int, noun: str) -> list[Insight]:
    out = []
    for name, mine, rest, _ in _gaps(units, 0, scale):
        worst = _worst_aspects(units, lambda k, n=name: k[0] == n, scale)
        out.append(
            Insight(
                kind="model_specific",
                severity="medium",
                finding=f"Candidate '{name}' scores {_fmt(rest - mine, scale)} points below "
                f"the others ({_fmt(mine, scale)} against {_fmt(rest, scale)}).",
                action=f"Consider a prompt variant for '{name}' (e.g. more explicit structure "
                "instructions), or drop the model.",
                evidence=(
                    f"mean {_fmt(mine, scale)} vs {_fmt(rest, scale)} for the other candidates",
                    f"its worst {noun}s: {worst}",
                ),
                data={"candidate": name, "mean": mine, "others_mean": rest},
            )
        )
    return out


def _model_fields(
    units: Mapping[UnitKey, float], threshold: float, scale: int, noun: str
) -> list[Insight]:
    """A field one candidate fails in every answer while the others pass it on average."""
    per: dict[tuple[str, str], list[float]] = {}
    for key, value in units.items():
        per.setdefault((key[0], key[5]), []).append(value)
    out = []
    for (candidate, aspect), values in per.items():
        others = [v for (c, a), vs in per.items() if a == aspect and c != candidate for v in vs]
        if len(values) < MIN_ANSWERS or not others or any(v >= threshold for v in values):
            continue
        mine, rest = statistics.fmean(values), statistics.fmean(others)
        if rest < threshold:
            continue  # everyone struggles: a failing field, not a model's problem
        out.append(
            Insight(
                kind="model_specific",
                severity="medium",
                finding=f"Candidate '{candidate}' fails the {noun} '{aspect}' in every answer "
                f"({_fmt(mine, scale)}) while the other candidates pass it "
                f"({_fmt(rest, scale)}).",
                action=f"Give '{candidate}' explicit instructions for '{aspect}' (a "
                "model-specific prompt variant), or drop the model.",
                evidence=(
                    f"'{aspect}': {len(values)} answers of '{candidate}', best "
                    f"{_fmt(max(values), scale)}, threshold {_fmt(threshold, scale)}; the "
                    f"others' mean {_fmt(rest, scale)} over {len(others)} answers",
                ),
                data={"candidate": candidate, noun: aspect, "mean": mine, "others_mean": rest},
            )
        )
    return sorted(out, key=lambda i: i.data["mean"] - i.data["others_mean"])


def _hard_inputs(units: Mapping[UnitKey, float], scale: int, noun: str) -> list[Insight]:
    out = []
    for name, mine, rest, values in _gaps(units, 3, scale):
        per_candidate: dict[str, list[float]] = {}
        for key, value in units.items():
            if _input(key) == name:
                per_candidate.setdefault(key[0], []).append(value)
        means = [statistics.fmean(v) for v in per_candidate.values()]
        spread = statistics.pstdev(means) if len(means) > 1 else 0.0
        worst = _worst_aspects(units, lambda k, n=name: _input(k) == n, scale)
        out.append(
            Insight(
                kind="hard_input",
                severity="medium",
                finding=f"Input '{name}' is hard: {_fmt(mine, scale)} against "
                f"{_fmt(rest, scale)} for the other inputs.",
                action="Find out what makes it hard (sparse data, an unusual case) and add "
                "guidance for such inputs; keep it in the regression set.",
                evidence=(
                    f"mean {_fmt(mine, scale)} over {len(values)} scores, spread over "
                    f"candidates (std) {_fmt(spread, scale)}",
                    f"its worst {noun}s: {worst}",
                ),
                data={"input": name, "mean": mine, "others_mean": rest, "std": spread},
            )
        )
    return out


def _output_format(run: RunRecord) -> list[Insight]:
    from qualspec.judges import is_field_grade

    responses = {r.key: r for r in run.responses}
    counts: dict[str, dict[str, int]] = {}
    totals: dict[str, int] = {}
    for j in run.judgments:
        if not is_field_grade(j) or j.response_key not in responses:
            continue
        candidate = responses[j.response_key].candidate
        totals[candidate] = totals.get(candidate, 0) + 1
        for flag in (j.details or {}).get("flags") or ():
            if flag in ("malformed_json", "refusal"):
                per = counts.setdefault(candidate, {})
                per[flag] = per.get(flag, 0) + 1
    out = []
    for candidate, flags in sorted(counts.items()):
        said = ", ".join(f"{n} {flag.replace('_', ' ')}" for flag, n in sorted(flags.items()))
        out.append(
            Insight(
                kind="output_format",
                severity="high",
                finding=f"Candidate '{candidate}' did not answer in the structure asked: "
                f"{said} of {totals[candidate]} answers.",
                action="Ask for JSON more explicitly (structured output, an example object); "
                "a refusal may need the task reworded.",
                evidence=(f"{said} in {totals[candidate]} graded answers",),
                data={"candidate": candidate, "flags": flags, "answers": totals[candidate]},
            )
        )
    return out


def _inconsistent(run: RunRecord) -> list[Insight]:
    check = (run.summary.metadata or {}).get("grader_check")
    if not isinstance(check, Mapping) or not check.get("flagged"):
        return []
    flagged = check.get("flagged_items") or []
    lines = [
        f"{check.get('flagged')} of {check.get('items')} items spread more than "
        f"{check.get('max_spread')} over {check.get('repeats')} re-grades "
        f"(mean spread {check.get('mean_spread')}, largest {check.get('largest_spread')})"
    ]
    lines += [str(item) for item in flagged[:5]]
    return [
        Insight(
            kind="inconsistent_grading",
            severity="high",
            finding="The grader is inconsistent: the same answer got different scores.",
            action="Make the grading prompt less subjective (a clearer rubric, examples) and "
            "lower the grader's temperature; re-check with qualspec grader-check.",
            evidence=tuple(lines),
            data=dict(check),
        )
    ]


def _reference_changed(run: RunRecord, baseline: RunRecord | None) -> list[Insight]:
    from qualspec.analysis._reference_changes import reference_changes

    if baseline is None or baseline.summary.id == run.summary.id:
        return []
    changes = reference_changes(baseline, run)
    warning = changes.warning()
    if warning is None:
        return []
    evidence = [
        f"compared with run {baseline.summary.id}: {warning}",
        *(
            f"{c.input}: "
            + (
                "asked with a different prompt or model"
                if c.reason == "prompt"
                else "a different answer"
            )
            + (f"; the review ({c.status_a}) does not apply any more" if c.review_lost else "")
            for c in changes.changes[:10]
        ),
    ]
    return [
        Insight(
            kind="reference_changed",
            severity="high",
            finding=f"Reference changed for {len(changes.changes)} "
            f"input{'' if len(changes.changes) == 1 else 's'} since run "
            f"{baseline.summary.id}: scores on them are not comparable with that run's.",
            action="Review the new reference answers (qualspec reference list) before "
            "reading a change in accuracy as the candidates'; a person's review of the old "
            "reference does not carry over to a new prompt version.",
            evidence=tuple(evidence),
            data={"baseline": baseline.summary.id, **changes.to_dict()},
        )
    ]
