"""The Lab's evaluator as an evaluator type (``lab``, entry point group
``qualspec.evaluators``), registered like every other evaluator.

It scores an answer 0-1 against criteria with the Lab's evaluation prompt and schema, read
as strictly as in the Lab (a score outside 0-1, a missing field or prose is unscored and
asked again once); the record's score is that times 10, ``passed`` the evaluator's
``meets_criteria``, ``details`` the 0-1 score and the improvement suggestions. A suite
names it as ``{type: lab, model: ..., options: {criteria: "...", format: "..."}}``;
``instruct`` defaults to the answer's own prompt (its last user message).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from qualspec.engine import BaseEvaluator, EvalContext, Subject, Verdict
from qualspec.errors import ConfigError

if TYPE_CHECKING:
    from qualspec.spec import EvaluatorConfig

__all__ = ["LabEvaluator", "create"]


class LabEvaluator(BaseEvaluator):
    """A response-scope evaluator asking the Lab's evaluation (see the module)."""

    uses_dependencies = False

    def __init__(
        self,
        name: str,
        *,
        model: str | None = None,
        threshold: float | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        from qualspec.spec import DEFAULT_JUDGE_MODEL

        self.judge: str = model or DEFAULT_JUDGE_MODEL
        super().__init__(name, model=self.judge, threshold=threshold, options=options)
        criteria = self.options.get("criteria")
        if not isinstance(criteria, str) or not criteria.strip():
            raise ConfigError(
                f"evaluator {name!r} of type lab: give options: {{criteria: what the answer "
                "must meet}}"
            )
        self.criteria = criteria
        self.format = str(self.options.get("format") or "any")
        self.instruct = self.options.get("instruct")

    def aspects(self, items: Any) -> tuple[str, ...]:
        """One record per answer, labelled with the criteria."""
        return (self.criteria,)

    async def evaluate(self, subject: Subject, aspect: str, ctx: EvalContext) -> Verdict:
        """The Lab's evaluation of the answer."""
        from qualspec.lab._lab import PARSE_RETRIES
        from qualspec.lab._prompts import EVALUATION_SCHEMA, evaluation_messages, read_evaluation

        item = subject.items[0]
        asked = [m.content for m in item.messages if m.role == "user"]
        instruct = str(self.instruct or (asked[-1] if asked else ""))
        answer = (subject.responses[0].text or "").strip()
        note: str | None = None
        why: str | None = None
        raw: str | None = None
        for attempt in range(PARSE_RETRIES + 1):
            reply = await ctx.complete(
                self.judge,
                evaluation_messages(instruct, self.format, self.criteria, answer, note),
                kind="lab_eval",
                json_schema=EVALUATION_SCHEMA,
                attempt=attempt,
            )
            if reply.error is not None:
                return Verdict(error=f"evaluation failed: {reply.error}")
            raw = reply.text
            evaluation, why = read_evaluation(reply.text or "", reply.structured)
            if evaluation is not None:
                return Verdict(
                    score=round(evaluation.score * 10, 4),
                    passed=evaluation.meets_criteria,
                    reasoning=evaluation.evaluation_reasoning,
                    raw_text=raw,
                    details={
                        "score": evaluation.score,
                        "improvement_suggestions": evaluation.improvement_suggestions,
                    },
                )
            note = (
                f"Your previous answer could not be read ({why}). Answer only with the "
                "JSON object described above, with a score from 0.0 to 1.0."
            )
        return Verdict(unscored_reason=why, raw_text=raw)


def create(config: EvaluatorConfig) -> LabEvaluator:
    """The factory the entry point names."""
    return LabEvaluator.create(config)
