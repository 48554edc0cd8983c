"""Evaluators written with ``@qualspec.evaluator``, named in suites as
``helpers_decorated:NAME`` (tests/engine is on the path of the engine tests)."""

from __future__ import annotations

import qualspec
from qualspec import Subject, Verdict
from qualspec.engine import FunctionContext


@qualspec.evaluator(scope="response")
async def brevity(subject: Subject, ctx: FunctionContext) -> Verdict:
    """Passes an answer of at most 20 words; asks the judge model for a second opinion."""
    text = subject.responses[0].text or ""
    words = len(text.split())
    opinion = await ctx.complete(f"Is this answer brief? {text}")
    reason = f"{words} words; the judge says: {opinion.text}"
    return Verdict(score=10.0 if words <= 20 else 0.0, reasoning=reason)


@qualspec.evaluator(scope="group", min_answers=2)
async def same_length(subject: Subject, ctx: FunctionContext) -> bool:
    """Whether every answer of a matrix cell (across temperatures) has the same length."""
    return len({len(r.text or "") for r in subject.responses}) == 1


class Counted(qualspec.BaseEvaluator):
    """The base class: only ``evaluate`` is written."""

    async def evaluate(self, subject: Subject, aspect: str, ctx: qualspec.EvalContext) -> Verdict:
        return Verdict(score=float(len(subject.responses)), details={"aspect": aspect})
