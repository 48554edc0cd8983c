"""An example evaluator plugin: how consistent are the answers of one group?

It groups the answers of each (scenario, input, role, candidate) across temperatures and
repeated runs (the decorator's default groups), waits for every answer of a group, and
scores the group 0-10 by the mean pairwise word overlap (Jaccard) of its answers. It calls
no model.

Install it (``pip install ./examples/plugin``) and name it in a suite::

    judges:
      - {type: criteria, model: openai/gpt-4o-mini}
      - {type: consistency, threshold: 5}
"""

from __future__ import annotations

import itertools
import re

import qualspec

__all__ = ["consistency"]

_WORD = re.compile(r"\w+")


@qualspec.evaluator(scope="group", min_answers=2, uses_dependencies=False)
async def consistency(subject: qualspec.Subject, ctx: object) -> qualspec.Verdict:
    """Mean pairwise Jaccard overlap of the answers' words, on 0-10."""
    words = [set(_WORD.findall((r.text or "").lower())) for r in subject.responses]
    pairs = list(itertools.combinations(words, 2))
    if not pairs:
        return qualspec.Verdict(unscored_reason="fewer than two answers in the group")
    overlap = [len(a & b) / len(a | b) if a | b else 1.0 for a, b in pairs]
    return qualspec.Verdict(
        score=round(10 * sum(overlap) / len(overlap), 2),
        reasoning=f"mean word overlap of {len(words)} answers over {len(pairs)} pairs",
        details={"group": subject.group, "answers": len(words)},
    )
