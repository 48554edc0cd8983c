"""The defaults of the evaluator protocol's optional hooks, for the built-in evaluators
that need no other: items of kind ``candidate``, waits for dependencies, no planned calls,
no preparation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qualspec.engine import Calibrated, PlannedCalls, PrepareContext, WorkItem


class HookDefaults:
    """Mixed into an evaluator: the protocol's defaults for the members it leaves out."""

    kinds: Sequence[str] = ("candidate",)
    uses_dependencies: bool = True

    def planned_calls(self, items: Sequence[WorkItem]) -> Sequence[PlannedCalls]:
        """No model call."""
        return ()

    def planned_preparation(
        self, *, calibrate: bool, calibrated: Calibrated | None
    ) -> Sequence[PlannedCalls]:
        """No preparation."""
        return ()

    async def prepare(self, ctx: PrepareContext) -> dict[str, Any] | None:
        """Nothing to prepare."""
        return None
