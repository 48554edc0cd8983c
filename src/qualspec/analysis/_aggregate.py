"""Aggregation shared by the diff and the reports: one score per matrix cell, run totals.

A *cell* is one (scenario, input, role, candidate, temperature) tuple; it holds one
response per run index. The rules, used everywhere:

* A response's score is the mean of its **scored** criteria (unscored judgments never count
  as zero; they are counted in ``n_unscored``). A response with no scored criterion has no
  score.
* A cell's score is the mean of its responses' scores (responses without one are skipped);
  ``None`` when nothing in the cell was scored.
* A cell **passes** when its score is at least the threshold recorded on its scored
  judgments (the highest one, should they differ); ``None`` when it has no score.
* Costs are **unknown** (None), never zero, as soon as one priced call has no known price:
  a call that answered, was not served from the cache, and has no recorded cost.

Cells come in **suite order**: scenarios, roles, candidates and temperatures in the order
of the run's plan (``metadata["dimensions"]``), inputs in their file's order when recorded
(``dimensions["inputs"]``), else by id with numbers compared as numbers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from qualspec.store import JudgmentRecord, ResponseRecord, RunRecord

__all__ = [
    "CHECKS_EVALUATOR",
    "CellKey",
    "CellScore",
    "RunTotals",
    "cell_key",
    "cell_scores",
    "judgments_by_response",
    "response_score",
    "run_totals",
    "suite_order",
    "temperature_label",
    "temperature_order",
]

CellKey = tuple[str, str | None, str | None, str, float | None]
"""(scenario, input_id, role, candidate, temperature)."""

CHECKS_EVALUATOR = "expect"  # the built-in evaluator of ``expect:`` checks


@dataclass(frozen=True, slots=True)
class CellScore:
    """The aggregate of one matrix cell over its runs and criteria.

    Attributes:
        mean: Mean score (0-10) over runs and scored criteria; None when nothing scored.
        n_runs: Responses in the cell (errors included).
        n_errors: Responses that are errors (no text, nothing judged).
        n_judgments: Judgments recorded for the cell's responses.
        n_unscored: Judgments that could not be scored.
        passed: ``mean >= threshold``; None when ``mean`` is None.
        threshold: The pass threshold recorded on the scored judgments.
        criteria: Criterion name -> mean score over runs (None when never scored), in the
            order the criteria were first met.
    """

    mean: float | None
    n_runs: int
    n_errors: int
    n_judgments: int
    n_unscored: int
    passed: bool | None
    threshold: float | None
    criteria: dict[str, float | None] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RunTotals:
    """Counts, mean score, tokens and cost of a whole run (candidate and judge calls split).

    ``passed``/``failed`` count judgments by their own pass flag (``expect:`` checks
    included; ``checks``, ``checks_passed`` and ``checks_failed`` count those alone);
    ``mean_score`` is the mean of every scored judgment but the checks' 0-or-10 records
    (None when none). Comparison records (``details["type"] == "comparison"``) are counted
    only in ``comparisons``, and field grades (``details["type"] == "field_grade"``) only in
    ``field_grades``, not among the judgments (their tokens and cost are counted).
    A cost is None when one of its calls had no known price (see the module docstring).
    """

    responses: int
    errors: int
    judgments: int
    scored: int
    unscored: int
    passed: int
    failed: int
    mean_score: float | None
    cached_responses: int
    cached_judgments: int
    candidate_cost_usd: float | None
    judge_cost_usd: float | None
    candidate_input_tokens: int
    candidate_output_tokens: int
    judge_input_tokens: int
    judge_output_tokens: int
    checks: int = 0
    checks_passed: int = 0
    checks_failed: int = 0
    comparisons: int = 0
    field_grades: int = 0

    @property
    def cost_usd(self) -> float | None:
        """Candidate plus judge cost; None when either is unknown."""
        if self.candidate_cost_usd is None or self.judge_cost_usd is None:
            return None
        return self.candidate_cost_usd + self.judge_cost_usd


def _mean(values: Iterable[float]) -> float | None:
    items = list(values)
    return sum(items) / len(items) if items else None


def judgments_by_response(run: RunRecord) -> dict[str, list[JudgmentRecord]]:
    """Group a run's judgments by the key of the response they judge (order kept)."""
    grouped: dict[str, list[JudgmentRecord]] = {}
    for judgment in run.judgments:
        grouped.setdefault(judgment.response_key, []).append(judgment)
    return grouped


def response_score(judgments: Iterable[JudgmentRecord]) -> float | None:
    """Mean of the scored criteria of one response; None when none was scored."""
    return _mean(j.score for j in judgments if j.score is not None)


def cell_key(response: ResponseRecord) -> CellKey:
    """The cell a response belongs to."""
    return (
        response.scenario,
        response.input_id,
        response.role,
        response.candidate,
        None if response.temperature is None else float(response.temperature),
    )


def temperature_label(temperature: float | None) -> str:
    """A requested temperature as reports print it: ``0.7``, or ``default`` when none was
    sent (the provider's own)."""
    return "default" if temperature is None else f"{temperature:g}"


def temperature_order(temperature: float | None) -> tuple[bool, float]:
    """A sort key for requested temperatures: ``default`` first, then by value."""
    return (temperature is not None, temperature or 0.0)


def _cell(responses: list[ResponseRecord], judged: dict[str, list[JudgmentRecord]]) -> CellScore:
    run_means: list[float] = []
    per_criterion: dict[str, list[float]] = {}
    thresholds: list[float] = []
    n_judgments = n_unscored = 0
    checks: list[bool] = []
    for response in responses:
        judgments = judged.get(response.key, [])
        n_judgments += len(judgments)
        for j in judgments:
            if j.evaluator == CHECKS_EVALUATOR and j.passed is not None:
                checks.append(j.passed)
            label = j.criterion if j.evaluator == "criteria" else f"{j.evaluator}: {j.criterion}"
            scores = per_criterion.setdefault(label, [])
            if j.score is None:
                n_unscored += 1
            else:
                scores.append(j.score)
                if j.threshold is not None:
                    thresholds.append(j.threshold)
        # the judge's mean; deterministic checks pass or fail the cell on their own
        score = response_score([j for j in judgments if j.evaluator != CHECKS_EVALUATOR])
        if score is not None:
            run_means.append(score)
    mean = _mean(run_means)
    threshold = max(thresholds) if thresholds else None
    passed = None if mean is None or threshold is None else mean >= threshold
    if checks:  # a failed check fails the cell, whatever the judge's scores
        passed = all(checks) and passed is not False
    return CellScore(
        mean=mean,
        n_runs=len(responses),
        n_errors=sum(1 for r in responses if r.error is not None),
        n_judgments=n_judgments,
        n_unscored=n_unscored,
        passed=passed,
        threshold=threshold,
        criteria={name: _mean(scores) for name, scores in per_criterion.items()},
    )


_DIGITS = re.compile(r"(\d+)")


def _natural(text: str) -> tuple[tuple[int, int | str], ...]:
    """``r2`` before ``r10``: digit runs compared as numbers."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part) for part in _DIGITS.split(text) if part
    )


def _ranks(values: Any) -> dict[Any, int]:
    if not isinstance(values, list):
        return {}
    return {v: i for i, v in enumerate(values) if isinstance(v, str | int | float)}


def suite_order(run: RunRecord) -> Callable[[CellKey], tuple[Any, ...]]:
    """A sort key putting cells (and their responses) in the order of the run's suite.

    Names the run's plan does not list (a run recorded before the plan was stored, a
    results file from elsewhere) come after the listed ones, in name order.
    """
    dims = run.summary.metadata.get("dimensions") if run.summary.metadata else None
    dims = dims if isinstance(dims, Mapping) else {}
    scenarios = _ranks(dims.get("scenarios"))
    roles = _ranks(dims.get("roles"))
    candidates = _ranks(dims.get("candidates"))
    raw_inputs = dims.get("inputs")
    inputs: dict[str, dict[Any, int]] = {}
    if isinstance(raw_inputs, Mapping):
        inputs = {str(k): _ranks(v) for k, v in raw_inputs.items()}

    def rank(table: Mapping[Any, int], value: Any) -> tuple[int, Any]:
        found = table.get(value)
        return (0, found) if found is not None else (1, _natural(str(value)))

    def key(cell: CellKey) -> tuple[Any, ...]:
        scenario, input_id, role, candidate, temperature = cell
        return (
            rank(scenarios, scenario),
            input_id is not None,
            rank(inputs.get(scenario, {}), input_id) if input_id is not None else (0, 0),
            role is not None,
            rank(roles, role) if role is not None else (0, 0),
            rank(candidates, candidate),
            temperature_order(temperature),
        )

    return key


def cell_scores(run: RunRecord) -> dict[CellKey, CellScore]:
    """Aggregate a run per cell, over run indexes and criteria (see the module docstring).

    Args:
        run: The run as stored.

    Returns:
        Cell key -> its score, in suite order (see :func:`suite_order`).

    Example:
        >>> for (scenario, input_id, role, candidate, temp), cell in cell_scores(run).items():
        ...     print(scenario, role, candidate, temp, cell.mean, cell.passed)
    """
    from qualspec.judges import is_field_grade

    # field grades (0-100, per reference) are aggregated apart (analysis.field_analysis)
    judged = {
        key: [j for j in records if not is_field_grade(j)]
        for key, records in judgments_by_response(run).items()
    }
    cells: dict[CellKey, list[ResponseRecord]] = {}
    for response in run.responses:
        cells.setdefault(cell_key(response), []).append(response)
    ordered = sorted(cells, key=suite_order(run))
    return {key: _cell(cells[key], judged) for key in ordered}


def _unpriced(record: ResponseRecord | JudgmentRecord) -> bool:
    """A call that answered, was not cached, and has no cost: its price is unknown."""
    if record.error is not None or record.cached or record.cost_usd is not None:
        return False
    if isinstance(record, JudgmentRecord):
        # an evaluator that calls no model costs nothing, nor a record decided without a
        # call (no judge key: a field grade decided by rules alone)
        return record.judge_model is not None and bool(record.judge_key)
    return True


def _cost(records: Iterable[ResponseRecord | JudgmentRecord]) -> float | None:
    total = 0.0
    for record in records:
        if _unpriced(record):
            return None
        total += record.cost_usd or 0.0
    return total


def run_totals(run: RunRecord) -> RunTotals:
    """Count a run's responses, errors, judgments (scored, unscored, passed), tokens and cost.

    Args:
        run: The run as stored.

    Returns:
        The totals; missing token counts count as zero, a cost with a call of unknown
        price is None.
    """
    from qualspec.judges import is_comparison, is_field_grade

    # comparisons rank a group's answers and field grades are 0-100 against a reference:
    # both counted apart, their calls in tokens and cost
    records = [j for j in run.judgments if not is_comparison(j) and not is_field_grade(j)]
    scores = [j.score for j in records if j.score is not None]
    checks = [j for j in records if j.evaluator == CHECKS_EVALUATOR]
    judged = [j.score for j in records if j.evaluator != CHECKS_EVALUATOR]
    return RunTotals(
        responses=len(run.responses),
        errors=sum(1 for r in run.responses if r.error is not None),
        judgments=len(records),
        scored=len(scores),
        unscored=len(records) - len(scores),
        passed=sum(1 for j in records if j.passed is True),
        failed=sum(1 for j in records if j.passed is False),
        mean_score=_mean(x for x in judged if x is not None),
        cached_responses=sum(1 for r in run.responses if r.cached),
        cached_judgments=sum(1 for j in run.judgments if j.cached),
        candidate_cost_usd=_cost(run.responses),
        judge_cost_usd=_cost(run.judgments),
        candidate_input_tokens=sum(r.input_tokens or 0 for r in run.responses),
        candidate_output_tokens=sum(r.output_tokens or 0 for r in run.responses),
        judge_input_tokens=sum(j.input_tokens or 0 for j in run.judgments),
        judge_output_tokens=sum(j.output_tokens or 0 for j in run.judgments),
        checks=len(checks),
        checks_passed=sum(1 for j in checks if j.passed is True),
        checks_failed=sum(1 for j in checks if j.passed is False),
        comparisons=sum(1 for j in run.judgments if is_comparison(j)),
        field_grades=sum(1 for j in run.judgments if is_field_grade(j)),
    )
