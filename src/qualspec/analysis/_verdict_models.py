"""The verdicts of a run, from one answer up: :class:`AnswerVerdict`, :class:`CellVerdict`,
:class:`RowVerdict` and :class:`RunVerdicts` (built by :func:`~qualspec.analysis.run_verdicts`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from qualspec.analysis._aggregate import CHECKS_EVALUATOR, CellKey
from qualspec.store import JudgmentRecord

RowKey = tuple[str, str | None, str | None, str]
"""(scenario, input_id, role, candidate): a candidate's line, over its temperatures."""

_AGGREGATIONS = ("mean_with_variance", "mean", "majority")
_DEFAULT_AGGREGATION = "mean_with_variance"
_DEFAULT_THRESHOLD = 7.0
_DEFAULT_GRADE_THRESHOLD = 80.0


def _kind(judgment: JudgmentRecord) -> str | None:
    details = judgment.details
    if isinstance(details, Mapping):
        found = details.get("type")
        return found if isinstance(found, str) else None
    return None


def format_verdict_score(score: float | None, scale: int | None) -> str:
    """A score as reports print it beside a verdict: ``8.1/10``, ``10/10``, ``92.1/100``,
    ``-`` (none)."""
    if score is None:
        return "-"
    text = f"{score:.1f}" if score % 1 else f"{score:.0f}"
    return f"{text}/{scale or 10}"


def _below(score: float, threshold: float, scale: int) -> str:
    """``6.3/10 < 7``, with enough decimals that the score never reads as the threshold."""
    text = f"{score:.1f}" if score % 1 else f"{score:.0f}"
    digits = 1
    while float(text) >= threshold and digits < 6:  # 6.96 is not "7.0/10 < 7"
        digits += 1
        text = f"{score:.{digits}f}"
    return f"{text}/{scale} < {threshold:g}"


def _mean(values: Iterable[float]) -> float | None:
    items = list(values)
    return sum(items) / len(items) if items else None


def _in(n: int, total: int) -> str:
    return "" if total == 1 else f" in {n} of {total}"


@dataclass(frozen=True, slots=True)
class AnswerVerdict:
    """One answer's parts: judge score, field grade and checks (see the module docstring).

    Attributes:
        error: The answer is an error (nothing judged).
        judge_score: Mean of its scored 0-10 criteria; None when none was scored.
        judge_threshold: The highest threshold recorded on those criteria.
        grade_score: Mean of its scored field grades (0-100); None when none.
        grade_threshold: The highest threshold recorded on those grades.
        checks: Each ``expect:`` check's name -> passed (checks without a verdict left out).
        judged: Whether any evaluator recorded something about it.
        scorable: Whether a judge or grader (not only checks) recorded something about it:
            when none of those records has a score, checks alone do not pass the answer.
    """

    error: bool
    judge_score: float | None
    judge_threshold: float | None
    grade_score: float | None
    grade_threshold: float | None
    checks: dict[str, bool] = field(default_factory=dict)
    judged: bool = False
    scorable: bool = False

    def verdict(self, threshold: float | None = None) -> tuple[bool | None, float | None, int]:
        """(passed, score, scale) of the answer alone: its judge score against
        ``threshold`` (default its own), else its field grade; checks must all pass."""
        if self.judge_score is not None:
            score, scale = self.judge_score, 10
            limit = threshold if threshold is not None else self.judge_threshold
        elif self.grade_score is not None:
            score, scale, limit = self.grade_score, 100, self.grade_threshold
        else:
            score, scale, limit = None, 10, None
        if score is None and not self.checks:
            return None, None, scale
        if score is None and self.scorable and all(self.checks.values()):
            return None, None, scale  # the judge could not score it: checks alone never pass
        ok = score is None or limit is None or score >= limit
        if self.judge_score is not None and self.grade_score is not None:
            ok = ok and (self.grade_threshold is None or self.grade_score >= self.grade_threshold)
        return ok and all(self.checks.values()), score, scale


def answer_verdict(judgments: Iterable[JudgmentRecord], *, error: bool = False) -> AnswerVerdict:
    """The parts of one answer's verdict from its records (comparisons ignored)."""
    judge: list[float] = []
    judge_limits: list[float] = []
    grades: list[float] = []
    grade_limits: list[float] = []
    checks: dict[str, bool] = {}
    judged = scorable = False
    for j in judgments:
        kind = _kind(j)
        if kind == "comparison":
            continue
        judged = True
        if j.evaluator == CHECKS_EVALUATOR:
            if j.passed is not None:
                checks[j.criterion] = checks.get(j.criterion, True) and j.passed
            continue
        scorable = True
        if j.score is None:
            continue
        if kind == "field_grade":
            grades.append(j.score)
            if j.threshold is not None:
                grade_limits.append(j.threshold)
        else:
            judge.append(j.score)
            if j.threshold is not None:
                judge_limits.append(j.threshold)
    return AnswerVerdict(
        error=error,
        judge_score=_mean(judge),
        judge_threshold=max(judge_limits) if judge_limits else None,
        grade_score=_mean(grades),
        grade_threshold=max(grade_limits) if grade_limits else None,
        checks=checks,
        judged=judged,
        scorable=scorable,
    )


class _CountedVerdict:
    """What a cell and a row verdict derive alike from their verdict and run counts."""

    __slots__ = ()

    passed: bool | None
    score: float | None
    scale: int
    runs: int
    errors: int
    voted: int
    runs_passed: int
    judged: int

    @property
    def runs_failed(self) -> int:
        """Runs whose own verdict is FAIL."""
        return self.voted - self.runs_passed

    @property
    def label(self) -> str:
        """``PASS``, ``FAIL``, or ``ERROR`` / ``UNSCORED`` / ``ANSWERED`` without a verdict."""
        if self.passed is not None:
            return "PASS" if self.passed else "FAIL"
        if self.runs and self.errors >= self.runs:
            return "ERROR"
        return "UNSCORED" if self.judged else "ANSWERED"

    @property
    def score_text(self) -> str:
        """``8.1/10``, ``92.1/100`` or ``-``."""
        return format_verdict_score(self.score, self.scale)


@dataclass(frozen=True, slots=True)
class CellVerdict(_CountedVerdict):
    """The verdict of one cell over its runs (see the module docstring).

    Attributes:
        passed: PASS/FAIL under the run's aggregation; None without a verdict.
        score: Mean score over the runs that have one (on ``scale``); None when none.
        scale: 10 (judge scores) or 100 (field grades).
        threshold: The threshold the score is held to.
        runs: Answers in the cell (errors included); ``errors`` of them are errors.
        voted: Runs with a verdict of their own; ``runs_passed`` of them passed.
        reasons: Why it failed (empty unless ``passed`` is False).
    """

    passed: bool | None
    score: float | None
    scale: int
    threshold: float | None
    runs: int
    errors: int
    voted: int
    runs_passed: int
    judged: int
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RowVerdict(_CountedVerdict):
    """A candidate's verdict over the temperatures of one (scenario, input, role).

    Attributes:
        passed: PASS when every temperature with a verdict passed; None when none has one.
        score: Mean of the cells' scores (on ``scale``).
        cells: Cells (temperatures); ``cells_passed`` and ``cells_failed`` have a verdict.
        runs, errors, voted, runs_passed: The cells' counts, summed.
        reasons: Each failing temperature's reasons (named by temperature when there are
            several).
    """

    passed: bool | None
    score: float | None
    scale: int
    threshold: float | None
    cells: int
    cells_passed: int
    cells_failed: int
    runs: int
    errors: int
    voted: int
    runs_passed: int
    judged: int
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RunVerdicts:
    """Every verdict of a run, in suite order.

    ``candidates`` counts, per candidate over the whole run, its rows (scenario, input,
    role) that passed, failed, or have no verdict.
    """

    aggregation: str
    cells: dict[CellKey, CellVerdict]
    rows: dict[RowKey, RowVerdict]

    def count(self, what: str = "cells") -> tuple[int, int, int]:
        """(passed, failed, without a verdict) of the ``cells`` or the ``rows``."""
        items: Iterable[CellVerdict | RowVerdict] = (
            self.cells.values() if what == "cells" else self.rows.values()
        )
        found = [v.passed for v in items]
        return (
            sum(1 for p in found if p is True),
            sum(1 for p in found if p is False),
            sum(1 for p in found if p is None),
        )

    @property
    def candidates(self) -> dict[str, tuple[int, int, int]]:
        """Candidate -> (rows passed, failed, without a verdict), in suite order."""
        out: dict[str, list[int]] = {}
        for key, row in self.rows.items():
            tally = out.setdefault(key[3], [0, 0, 0])
            tally[0 if row.passed is True else 1 if row.passed is False else 2] += 1
        return {k: (v[0], v[1], v[2]) for k, v in out.items()}
