"""The verdicts of a run, computed once: per answer, per cell, per candidate row, per run.

Every report (the console, the results JSON, the HTML report and the web app, which shows
those two) reads its PASS/FAIL and its counts from :func:`run_verdicts`, so they agree.

* An **answer** (one response) has a *judge score* (mean of its scored 0-10 criteria), a
  *field grade* (mean of its scored field grades, 0-100, against a reference) and its
  ``expect:`` checks (pass or fail each). Comparison records are not part of it.
* A **cell** (scenario, input, role, candidate, temperature) is scored on the judge's
  0-10 scale when any of its answers has a judge score, else on the field grade's 0-100
  scale (a reference-graded run); its threshold is the highest one recorded on those
  records (else the run's judge threshold, 7, or the grader's, 80). Its verdict follows the
  run's ``aggregation``:

  - ``mean_with_variance`` and ``mean``: PASS when the mean score reaches the threshold and
    every ``expect:`` check passed in every run (and, on the 0-10 scale, every field grade
    reached its threshold). Checks alone decide a cell nothing was to score
    (``--no-judge``); a cell whose judge could not score any answer has no verdict
    (UNSCORED) unless a check failed.
  - ``majority``: each run passes when its own score reaches the threshold and its checks
    pass (a run its judge could not score votes only when a check failed); the cell passes
    when more runs passed than failed (a tie fails).

  A cell with neither a score nor a check has no verdict (errors, unscored, ``--no-judge``).
* A **candidate row** (scenario, input, role, candidate: the console's nested line, the
  HTML matrix's verdict column) passes when every temperature of it with a verdict passes;
  its score is the mean of its cells' scores.
* Every FAIL carries its **reasons**: which score is below which threshold
  (``6.3/10 < 7``), which check failed in how many runs (``check 'mentions_x' failed in 1
  of 3``), and under ``majority`` how many runs failed; a row's reasons name the
  temperature of each failing cell (``at 1.5: 6.3/10 < 7``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from qualspec.analysis._aggregate import CellKey, cell_key, suite_order, temperature_label
from qualspec.analysis._verdict_models import (
    _AGGREGATIONS,
    _DEFAULT_AGGREGATION,
    _DEFAULT_GRADE_THRESHOLD,
    _DEFAULT_THRESHOLD,
    AnswerVerdict,
    CellVerdict,
    RowKey,
    RowVerdict,
    RunVerdicts,
    _below,
    _in,
    _mean,
    answer_verdict,
    format_verdict_score,
)
from qualspec.store import JudgmentRecord, ResponseRecord, RunRecord

__all__ = [
    "AnswerVerdict",
    "CellVerdict",
    "RowKey",
    "RowVerdict",
    "RunVerdicts",
    "VerdictStream",
    "answer_verdict",
    "candidate_records",
    "format_verdict_score",
    "run_verdicts",
    "verdicts_to_dict",
]


def candidate_records(run: RunRecord) -> RunRecord:
    """The run with its candidates' answers only (reference answers left out)."""
    if all(r.kind == "candidate" for r in run.responses):
        return run
    return dataclasses.replace(run, responses=[r for r in run.responses if r.kind == "candidate"])


def _settings(run: RunRecord) -> tuple[str, float, float]:
    meta = run.summary.metadata or {}
    found = meta.get("aggregation")
    aggregation = found if found in _AGGREGATIONS else _DEFAULT_AGGREGATION
    judge = meta.get("judge")
    limit = judge.get("threshold") if isinstance(judge, Mapping) else None
    threshold = float(limit) if isinstance(limit, int | float) else _DEFAULT_THRESHOLD
    grader = meta.get("grader")
    glimit = grader.get("threshold") if isinstance(grader, Mapping) else None
    grade = float(glimit) if isinstance(glimit, int | float) else _DEFAULT_GRADE_THRESHOLD
    return aggregation, threshold, grade


def _grade_ok(a: AnswerVerdict, default_grade: float) -> bool:
    """Whether an answer's field grade (if any) reaches its threshold."""
    limit = a.grade_threshold if a.grade_threshold is not None else default_grade
    return a.grade_score is None or a.grade_score >= limit


def _majority_detail(
    failed: Sequence[tuple[AnswerVerdict, float | None]],
    check_names: Sequence[str],
    threshold: float,
    default_grade: float,
) -> str:
    """Why the failed runs of a majority vote failed: `` (2 scored below 7, ...)``."""
    parts = []
    below = sum(1 for _, main in failed if main is not None and main < threshold)
    if below:
        parts.append(f"{below} scored below {threshold:g}")
    for name in check_names:
        n = sum(1 for a, _ in failed if a.checks.get(name) is False)
        if n:
            parts.append(f"check '{name}' failed in {n}")
    n_grades = sum(1 for a, _ in failed if not _grade_ok(a, default_grade))
    if n_grades:
        parts.append(f"field grade below its threshold in {n_grades}")
    return f" ({', '.join(parts)})" if parts else ""


def _cell(
    answers: Sequence[AnswerVerdict],
    aggregation: str,
    default_threshold: float,
    default_grade: float,
) -> CellVerdict:
    judge = any(a.judge_score is not None for a in answers)
    scale = 100 if not judge and any(a.grade_score is not None for a in answers) else 10
    if scale == 10:
        mains = [a.judge_score for a in answers]
        limits = [a.judge_threshold for a in answers if a.judge_threshold is not None]
        threshold = max(limits) if limits else default_threshold
    else:
        mains = [a.grade_score for a in answers]
        limits = [a.grade_threshold for a in answers if a.grade_threshold is not None]
        threshold = max(limits) if limits else default_grade
    scored = [m for m in mains if m is not None]
    score = _mean(scored)
    check_names = list(dict.fromkeys(n for a in answers for n in a.checks))
    # on the judge's scale, a field grade is one more requirement (like a check)
    graded = [a for a in answers if scale == 10 and a.grade_score is not None]

    def grade_ok(a: AnswerVerdict) -> bool:
        return _grade_ok(a, default_grade)

    votes: list[tuple[bool, AnswerVerdict, float | None]] = []
    for a, main in zip(answers, mains, strict=True):
        if main is None and not a.checks and not (scale == 10 and a.grade_score is not None):
            continue
        ok = (main is None or main >= threshold) and all(a.checks.values()) and grade_ok(a)
        if ok and main is None and a.scorable:
            continue  # its judge could not score it: passing checks alone are no vote
        votes.append((ok, a, main))
    runs_passed = sum(1 for ok, _, _ in votes if ok)
    reasons: list[str] = []
    passed: bool | None
    if aggregation == "majority":
        passed = None if not votes else runs_passed > len(votes) - runs_passed
        if passed is False:
            failed = [(a, main) for ok, a, main in votes if not ok]
            detail = _majority_detail(failed, check_names, threshold, default_grade)
            reasons.append(f"majority: {len(failed)} of {len(votes)} runs failed{detail}")
    else:
        score_ok = None if score is None else score >= threshold
        has_checks = any(a.checks for a in answers)
        # checks alone decide a cell nobody was to score (--no-judge), never one whose
        # judge could not score it (unless a check failed)
        unscored = score is None and any(a.scorable for a in answers)
        failing = any(not ok for a in answers for ok in a.checks.values())
        if (score_ok is None and not has_checks and not graded) or (unscored and not failing):
            passed = None
        else:
            if score is not None and score_ok is False:
                reasons.append(_below(score, threshold, scale))
            for name in check_names:
                ran = [a.checks[name] for a in answers if name in a.checks]
                n = sum(1 for ok in ran if not ok)
                if n:
                    reasons.append(f"check '{name}' failed{_in(n, len(ran))}")
            n_grades = sum(1 for a in graded if not grade_ok(a))
            if n_grades:
                reasons.append(f"field grade below its threshold{_in(n_grades, len(graded))}")
            passed = not reasons
    return CellVerdict(
        passed=passed,
        score=score,
        scale=scale,
        threshold=threshold,
        runs=len(answers),
        errors=sum(1 for a in answers if a.error),
        voted=len(votes),
        runs_passed=runs_passed,
        judged=sum(1 for a in answers if a.judged),
        reasons=tuple(reasons) if passed is False else (),
    )


def _row(cells: Sequence[tuple[CellKey, CellVerdict]]) -> RowVerdict:
    several = len(cells) > 1
    scales = {c.scale for _, c in cells if c.score is not None}
    scale = 10 if 10 in scales or not scales else 100
    scores = [c.score for _, c in cells if c.score is not None and c.scale == scale]
    limits = [c.threshold for _, c in cells if c.threshold is not None and c.scale == scale]
    verdicts = [c.passed for _, c in cells if c.passed is not None]
    reasons: list[str] = []
    for key, c in cells:
        if c.passed is False:
            prefix = f"at {temperature_label(key[4])}: " if several else ""
            reasons.extend(prefix + r for r in c.reasons)
    passed = all(verdicts) if verdicts else None
    return RowVerdict(
        passed=passed,
        score=_mean(scores),
        scale=scale,
        threshold=max(limits) if limits else None,
        cells=len(cells),
        cells_passed=sum(1 for v in verdicts if v),
        cells_failed=sum(1 for v in verdicts if not v),
        runs=sum(c.runs for _, c in cells),
        errors=sum(c.errors for _, c in cells),
        voted=sum(c.voted for _, c in cells),
        runs_passed=sum(c.runs_passed for _, c in cells),
        judged=sum(c.judged for _, c in cells),
        reasons=tuple(reasons) if passed is False else (),
    )


def run_verdicts(run: RunRecord, *, aggregation: str | None = None) -> RunVerdicts:
    """Every verdict of ``run`` (see the module docstring); reference answers left out.

    Args:
        run: The run as stored.
        aggregation: ``mean_with_variance``, ``mean`` or ``majority``; default the run's
            recorded aggregation.

    Example:
        >>> v = run_verdicts(run)
        >>> for (scenario, input_id, role, candidate), row in v.rows.items():
        ...     print(candidate, row.label, row.score_text, "; ".join(row.reasons))
    """
    recorded, threshold, grade = _settings(run)
    how = aggregation or recorded
    if how not in _AGGREGATIONS:
        raise ValueError(f"unknown aggregation {how!r}: use one of {', '.join(_AGGREGATIONS)}")
    by_response: dict[str, list[JudgmentRecord]] = {}
    for j in run.judgments:
        by_response.setdefault(j.response_key, []).append(j)
    grouped: dict[CellKey, list[ResponseRecord]] = {}
    for r in run.responses:
        if r.kind == "candidate":
            grouped.setdefault(cell_key(r), []).append(r)
    cells: dict[CellKey, CellVerdict] = {}
    for key in sorted(grouped, key=suite_order(run)):
        answers = [
            answer_verdict(by_response.get(r.key, ()), error=r.error is not None)
            for r in sorted(grouped[key], key=lambda rec: rec.run_index)
        ]
        cells[key] = _cell(answers, how, threshold, grade)
    by_row: dict[RowKey, list[tuple[CellKey, CellVerdict]]] = {}
    for key, cell in cells.items():
        by_row.setdefault(key[:4], []).append((key, cell))
    rows = {key: _row(found) for key, found in by_row.items()}
    return RunVerdicts(aggregation=how, cells=cells, rows=rows)


class VerdictStream:
    """The verdicts of a run whose answers come one at a time, in suite order (every
    cell's answers together, by run index: the order :func:`run_verdicts` puts them in),
    so that a run of any size is judged without holding it: each candidate row's verdict,
    with its cells', is given back once the row is complete.

    Args:
        run: The run (its summary is enough: the aggregation and thresholds recorded).
        aggregation: As :func:`run_verdicts`'.

    Example:
        >>> stream = VerdictStream(RunRecord(summary=summary))
        >>> for key, verdict in answers_in_suite_order:
        ...     for row_key, row, cells in stream.add(key, verdict):
        ...         print(row_key, row.label)
        >>> done = stream.close()  # the last row
    """

    def __init__(self, run: RunRecord, *, aggregation: str | None = None) -> None:
        recorded, self._threshold, self._grade = _settings(run)
        self.aggregation = aggregation or recorded
        if self.aggregation not in _AGGREGATIONS:
            raise ValueError(
                f"unknown aggregation {self.aggregation!r}: use one of {', '.join(_AGGREGATIONS)}"
            )
        self._cell: CellKey | None = None
        self._answers: list[AnswerVerdict] = []
        self._cells: list[tuple[CellKey, CellVerdict]] = []

    def add(
        self, key: CellKey, verdict: AnswerVerdict
    ) -> list[tuple[RowKey, RowVerdict, list[tuple[CellKey, CellVerdict]]]]:
        """Add the next answer (of cell ``key``); the rows it completed (none or one)."""
        done = self._finish_cell() if key != self._cell else []
        self._cell = key
        self._answers.append(verdict)
        return done

    def close(self) -> list[tuple[RowKey, RowVerdict, list[tuple[CellKey, CellVerdict]]]]:
        """The last row (none when no answer came)."""
        done = self._finish_cell()
        if self._cells:
            done.append(self._finish_row())
        return done

    def _finish_cell(self) -> list[tuple[RowKey, RowVerdict, list[tuple[CellKey, CellVerdict]]]]:
        done = []
        if self._cell is not None and self._answers:
            cell = _cell(self._answers, self.aggregation, self._threshold, self._grade)
            if self._cells and self._cells[0][0][:4] != self._cell[:4]:
                done.append(self._finish_row())
            self._cells.append((self._cell, cell))
        self._answers = []
        self._cell = None
        return done

    def _finish_row(self) -> tuple[RowKey, RowVerdict, list[tuple[CellKey, CellVerdict]]]:
        cells, self._cells = self._cells, []
        first = cells[0][0]
        return (first[0], first[1], first[2], first[3]), _row(cells), cells


def _verdict_fields(v: CellVerdict | RowVerdict) -> dict[str, Any]:
    return {
        "verdict": None if v.passed is None else ("pass" if v.passed else "fail"),
        "label": v.label,
        "score": v.score,
        "scale": v.scale,
        "threshold": v.threshold,
        "runs": v.runs,
        "errors": v.errors,
        "runs_voted": v.voted,
        "runs_passed": v.runs_passed,
        "runs_failed": v.runs_failed,
        "reasons": list(v.reasons),
    }


def verdicts_to_dict(verdicts: RunVerdicts) -> dict[str, Any]:
    """The verdicts as plain JSON data (the results file's ``verdicts``)."""
    cells_p, cells_f, cells_n = verdicts.count("cells")
    rows_p, rows_f, rows_n = verdicts.count("rows")
    return {
        "aggregation": verdicts.aggregation,
        "totals": {
            "cells": {"passed": cells_p, "failed": cells_f, "no_verdict": cells_n},
            "candidates": {"passed": rows_p, "failed": rows_f, "no_verdict": rows_n},
        },
        "by_candidate": {
            name: {"passed": p, "failed": f, "no_verdict": n}
            for name, (p, f, n) in verdicts.candidates.items()
        },
        "candidates": [
            {
                "scenario": s,
                "input_id": i,
                "role": r,
                "candidate": c,
                "cells": row.cells,
                "cells_passed": row.cells_passed,
                "cells_failed": row.cells_failed,
                **_verdict_fields(row),
            }
            for (s, i, r, c), row in verdicts.rows.items()
        ],
        "cells": [
            {
                "scenario": s,
                "input_id": i,
                "role": r,
                "candidate": c,
                "temperature": t,
                **_verdict_fields(cell),
            }
            for (s, i, r, c, t), cell in verdicts.cells.items()
        ],
    }
