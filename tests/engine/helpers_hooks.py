"""An evaluator that uses every hook of the protocol (issue 18, item 1): it plans three
calls per answer, plans a preparation of five calls (the same one for every evaluator of
its kind), and prepares by returning what the run records."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from qualspec import EvalContext, EvaluatorConfig, Subject, Verdict
from qualspec.engine import Calibrated, PlannedCalls, PrepareContext, WorkItem

PREPARED: list[str] = []


class Hooked:
    scope = "response"
    kinds: Sequence[str] = ("candidate",)
    uses_dependencies = False
    scores_criteria = False
    threshold = None

    def __init__(self, name: str, model: str) -> None:
        self.name = name
        self.model = model

    def prompt(self) -> tuple[str, str] | None:
        return None

    def group_of(self, item: WorkItem) -> str | None:
        return None

    def aspects(self, items: Sequence[WorkItem]) -> tuple[str, ...]:
        return ("x",)

    async def evaluate(self, subject: Subject, aspect: str, ctx: EvalContext) -> Verdict:
        return Verdict(score=10.0)

    def planned_calls(self, items: Sequence[WorkItem]) -> Sequence[PlannedCalls]:
        return (PlannedCalls(3, 100, 10, retries=1),)

    def planned_preparation(
        self, *, calibrate: bool, calibrated: Calibrated | None
    ) -> Sequence[PlannedCalls]:
        if not calibrate:
            return ()
        return (PlannedCalls(5, 50, 10, kind="calibration", pairs=2, key="shared"),)

    async def prepare(self, ctx: PrepareContext) -> Mapping[str, Any] | None:
        async def measure() -> int:
            PREPARED.append(self.name)
            return 7

        value = await ctx.once("shared", measure)
        ctx.warn(f"{self.name} prepared")
        return {"measured": value, "calibrate": ctx.calibrate}


def hooked(config: EvaluatorConfig) -> Hooked:
    return Hooked(config.name or "hooked", config.model or "fake/judge")
