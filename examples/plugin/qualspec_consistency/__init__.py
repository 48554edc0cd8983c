"""An example evaluator plugin: how consistent are the answers of one group?

It groups the answers of each (scenario, input, role, candidate) across temperatures and
repeated runs, waits for every answer of a group, and scores the group 0-10 by the mean
pairwise word overlap (Jaccard) of its answers. It calls no model.

Install it (``pip install ./examples/plugin``) and name it in a suite::

    judges:
      - {type: criteria, model: openai/gpt-4o-mini}
      - {type: consistency, threshold: 5}
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from qualspec import EvalContext, EvaluatorConfig, Subject, Verdict
from qualspec.engine import Scope, WorkItem

__all__ = ["ConsistencyEvaluator", "create"]

_WORD = re.compile(r"\w+")


class ConsistencyEvaluator:
    """A group-scope evaluator (see the module docstring)."""

    scope: Scope = "group"
    model: str | None = None
    # compares the answers alone: never waits for reference answers (see the README)
    uses_dependencies = False

    def __init__(self, name: str, threshold: float) -> None:
        self.name = name
        self.threshold: float | None = threshold

    def prompt(self) -> tuple[str, str] | None:
        """No prompt: nothing to version."""
        return None

    def group_of(self, item: WorkItem) -> str | None:
        """One group per cell of the matrix without its temperature and run."""
        parts = (item.scenario, item.input_id or "", item.role or "", item.candidate)
        return "/".join(parts)

    def aspects(self, items: Sequence[WorkItem]) -> tuple[str, ...]:
        """A single aspect, when there is something to compare."""
        return ("consistency",) if len(items) > 1 else ()

    async def evaluate(self, subject: Subject, aspect: str, ctx: EvalContext) -> Verdict:
        """Mean pairwise Jaccard overlap of the answers' words, on 0-10."""
        words = [set(_WORD.findall((r.text or "").lower())) for r in subject.responses]
        pairs = list(itertools.combinations(words, 2))
        if not pairs:
            return Verdict(unscored_reason="fewer than two answers in the group")
        overlap = [len(a & b) / len(a | b) if a | b else 1.0 for a, b in pairs]
        score = round(10 * sum(overlap) / len(overlap), 2)
        return Verdict(
            score=score,
            reasoning=f"mean word overlap of {len(words)} answers over {len(pairs)} pairs",
            scores={r.key: None for r in subject.responses},
            details={"group": subject.group, "answers": len(words)},
        )


def create(config: EvaluatorConfig) -> ConsistencyEvaluator:
    """The factory the entry point names."""
    return ConsistencyEvaluator(config.label, config.threshold)
