"""A plugin evaluator that scores each answer's criteria its own way (a ``BaseEvaluator``
declaring ``scores_criteria``), and one that reads the answers without criteria."""

from __future__ import annotations

from collections.abc import Sequence

from qualspec import BaseEvaluator, EvalContext, Subject, Verdict
from qualspec.engine import WorkItem


class CriteriaScorer(BaseEvaluator):
    """One verdict per criterion of each answer: what the criteria judge records."""

    scores_criteria = True

    def aspects(self, items: Sequence[WorkItem]) -> tuple[str, ...]:
        return items[0].criteria

    async def evaluate(self, subject: Subject, aspect: str, ctx: EvalContext) -> Verdict:
        return Verdict(score=10.0 if aspect in (subject.responses[0].text or "") else 0.0)


class Reader(BaseEvaluator):
    """Reads every answer (one aspect), whatever its criteria."""

    async def evaluate(self, subject: Subject, aspect: str, ctx: EvalContext) -> Verdict:
        return Verdict(score=5.0)
