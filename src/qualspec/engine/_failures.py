"""The evaluators of a run that could not score anything (``--strict`` exits 1 on any)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qualspec.engine._evaluators import Evaluator
    from qualspec.store import JudgmentRecord, RunRecord

__all__ = ["judge_failures"]


def _scored(judgment: JudgmentRecord) -> bool:
    """A score, or (a group's comparison) a score per member."""
    if judgment.score is not None:
        return True
    return any(s is not None for s in (judgment.scores or {}).values())


def judge_failures(record: RunRecord, evaluators: Sequence[Evaluator]) -> list[str]:
    """A line for each model-calling evaluator of the run that scored nothing at all.

    Example: ``judge 'criteria' (openai/judge) could not judge: 0 of 12 records scored
    (12 failed calls; first: HTTP 500: ...)``.
    """
    out: list[str] = []
    for evaluator in evaluators:
        if evaluator.model is None:
            continue
        mine = [j for j in record.judgments if j.evaluator == evaluator.name and not j.superseded]
        if not mine or any(_scored(j) for j in mine):
            continue
        errors = [j for j in mine if j.error]
        first = errors[0].error if errors else mine[0].unscored_reason
        kind = f"{len(errors)} failed calls" if errors else "no verdict could be read"
        out.append(
            f"judge {evaluator.name!r} ({evaluator.model}) could not judge: 0 of {len(mine)} "
            f"records scored ({kind}; first: {' '.join(str(first or '?').split())[:160]})"
        )
    return out
