"""A field grader shaped like issue 10's contract, named in suites as
``helpers_field_grader:create``: one call per answer, the accuracy per field read from the
grader's JSON reply (``{"fields": {"name": 100, ...}}``), recorded as a ``field_grade``."""

from __future__ import annotations

import json
from collections.abc import Sequence

from qualspec import EvalContext, EvaluatorConfig, Subject, Verdict
from qualspec.engine import Scope, WorkItem

FIELDS = ("name", "industry")
REFERENCE = '{"name": "Acme", "industry": "software"}'


class FieldGrader:
    scope: Scope = "response"
    uses_dependencies = True

    def __init__(self, name: str, model: str | None) -> None:
        self.name = name
        self.model = model
        self.threshold: float | None = 80.0

    def prompt(self) -> tuple[str, str] | None:
        return ("field_grader", "grade every field of the answer against the reference")

    def group_of(self, item: WorkItem) -> str | None:
        return None

    def aspects(self, items: Sequence[WorkItem]) -> tuple[str, ...]:
        return ("fields",)

    async def evaluate(self, subject: Subject, aspect: str, ctx: EvalContext) -> Verdict:
        from qualspec.providers import Message

        reference = next(iter(subject.dependencies.values()), None)
        ref_text = reference.text if reference is not None else REFERENCE
        answer = subject.responses[0].text or ""
        prompt = (
            "Grade the answer field by field against the reference: an accuracy score "
            f"0-100 per field.\nReference: {ref_text}\nAnswer: {answer}"
        )
        assert self.model is not None
        reply = await ctx.complete(self.model, [Message("user", prompt)])
        if reply.error is not None:
            return Verdict(error=reply.error)
        fields = {k: float(v) for k, v in json.loads(reply.text or "{}")["fields"].items()}
        score = sum(fields.values()) / len(fields)
        return Verdict(
            score=score,
            scores=dict(fields),
            details={
                "type": "field_grade",
                "reference_key": reference.key if reference is not None else None,
                "fields": {k: {"accuracy": v} for k, v in fields.items()},
                "flags": [],
            },
        )


def create(config: EvaluatorConfig) -> FieldGrader:
    return FieldGrader(config.label, config.model)
