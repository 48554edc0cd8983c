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
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from qualspec.store._records import JudgmentRecord, ResponseRecord, RunRecord

__all__ = [
    "CellKey",
    "CellScore",
    "RunTotals",
    "cell_key",
    "cell_scores",
    "judgments_by_response",
    "response_score",
    "run_totals",
]

CellKey = tuple[str, str | None, str | None, str, float]
"""(scenario, input_id, role, candidate, temperature)."""


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

    ``passed``/``failed`` count judgments by their own pass flag; ``mean_score`` is the mean
    of every scored judgment (None when none).
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
    candidate_cost_usd: float
    judge_cost_usd: float
    candidate_input_tokens: int
    candidate_output_tokens: int
    judge_input_tokens: int
    judge_output_tokens: int

    @property
    def cost_usd(self) -> float:
        """Candidate plus judge cost."""
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
        float(response.temperature),
    )


def _cell(responses: list[ResponseRecord], judged: dict[str, list[JudgmentRecord]]) -> CellScore:
    run_means: list[float] = []
    per_criterion: dict[str, list[float]] = {}
    thresholds: list[float] = []
    n_judgments = n_unscored = 0
    for response in responses:
        judgments = judged.get(response.key, [])
        n_judgments += len(judgments)
        for j in judgments:
            scores = per_criterion.setdefault(j.criterion, [])
            if j.score is None:
                n_unscored += 1
            else:
                scores.append(j.score)
                thresholds.append(j.threshold)
        score = response_score(judgments)
        if score is not None:
            run_means.append(score)
    mean = _mean(run_means)
    threshold = max(thresholds) if thresholds else None
    passed = None if mean is None or threshold is None else mean >= threshold
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


def cell_scores(run: RunRecord) -> dict[CellKey, CellScore]:
    """Aggregate a run per cell, over run indexes and criteria (see the module docstring).

    Args:
        run: The run as stored.

    Returns:
        Cell key -> its score, in the order the cells' first responses appear in the run.

    Example:
        >>> for (scenario, input_id, role, candidate, temp), cell in cell_scores(run).items():
        ...     print(scenario, role, candidate, temp, cell.mean, cell.passed)
    """
    judged = judgments_by_response(run)
    cells: dict[CellKey, list[ResponseRecord]] = {}
    for response in run.responses:
        cells.setdefault(cell_key(response), []).append(response)
    return {key: _cell(responses, judged) for key, responses in cells.items()}


def run_totals(run: RunRecord) -> RunTotals:
    """Count a run's responses, errors, judgments (scored, unscored, passed), tokens and cost.

    Args:
        run: The run as stored.

    Returns:
        The totals; missing token counts and costs count as zero.
    """
    scores = [j.score for j in run.judgments if j.score is not None]
    return RunTotals(
        responses=len(run.responses),
        errors=sum(1 for r in run.responses if r.error is not None),
        judgments=len(run.judgments),
        scored=len(scores),
        unscored=len(run.judgments) - len(scores),
        passed=sum(1 for j in run.judgments if j.passed is True),
        failed=sum(1 for j in run.judgments if j.passed is False),
        mean_score=_mean(scores),
        cached_responses=sum(1 for r in run.responses if r.cached),
        cached_judgments=sum(1 for j in run.judgments if j.cached),
        candidate_cost_usd=sum(r.cost_usd or 0.0 for r in run.responses),
        judge_cost_usd=sum(j.cost_usd or 0.0 for j in run.judgments),
        candidate_input_tokens=sum(r.input_tokens or 0 for r in run.responses),
        candidate_output_tokens=sum(r.output_tokens or 0 for r in run.responses),
        judge_input_tokens=sum(j.input_tokens or 0 for j in run.judgments),
        judge_output_tokens=sum(j.output_tokens or 0 for j in run.judgments),
    )
