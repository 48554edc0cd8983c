"""Dry-run estimates: calls, tokens and cost per model, before anything is called.

Every number is a range: the calls the plan makes (each judge, grader and comparison call
asked once), and the most it can make when every one of them is asked again as often as
its evaluator allows (``parse_retries``, default 2: an answer the parser cannot read, such
as a score on a 0-1 scale, is re-asked). A calibration of a criteria judge on known pairs
before the run is counted too, when it will run (calibration on and no cached
measurement), and so is the reference field grader's on known field pairs. Retries after
failed calls (``--retries``) come on top of both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from qualspec.engine._blocks import blocks
from qualspec.engine._hooks import (
    Calibrated,
    PlannedCalls,
    answer_tokens,
    message_tokens,
)
from qualspec.engine._lazy import any_item

if TYPE_CHECKING:
    from qualspec.engine._evaluators import Evaluator
    from qualspec.engine._items import WorkItem
    from qualspec.engine._plan import Plan
    from qualspec.providers import PriceTable

__all__ = ["CalibrationEstimate", "Estimate", "GroupEstimate", "ModelEstimate", "estimate"]


@dataclass
class ModelEstimate:
    """Estimated calls, tokens and cost for one model address in one role (``kind``:
    candidate, reference, judge, grader, compare, calibration).

    ``calls``, tokens and ``cost_usd`` are the plan's (each call asked once);
    ``max_calls``, ``max_input_tokens``, ``max_output_tokens`` and ``max_cost_usd`` count
    every re-ask the evaluators allow.
    """

    model: str
    kind: str
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    max_calls: int = 0
    max_input_tokens: int = 0
    max_output_tokens: int = 0
    max_cost_usd: float | None = 0.0

    def add(self, calls: int, tokens_in: int, tokens_out: int, retries: int = 0) -> None:
        """Count ``calls`` calls of these tokens each, each asked up to ``retries`` more."""
        asks = 1 + max(retries, 0)
        self.calls += calls
        self.input_tokens += calls * tokens_in
        self.output_tokens += calls * tokens_out
        self.max_calls += calls * asks
        self.max_input_tokens += calls * asks * tokens_in
        self.max_output_tokens += calls * asks * tokens_out


@dataclass(frozen=True)
class GroupEstimate:
    """A group evaluator's work (a comparison): groups judged, calls, groups skipped;
    ``max_calls`` with every re-ask."""

    name: str
    model: str
    groups: int
    calls: int
    skipped: int
    max_calls: int = 0


@dataclass(frozen=True)
class CalibrationEstimate:
    """A calibration before the run: ``pairs`` known pairs, two answers each, one call per
    answer (``calls``), ``max_calls`` with every re-ask. ``role``: ``"judge"`` (a criteria
    judge on known answer pairs) or ``"grader"`` (the field grader on known field pairs)."""

    model: str
    pairs: int
    calls: int
    max_calls: int
    role: str = "judge"


@dataclass
class Estimate:
    """A dry run's numbers.

    ``groups`` lists each group-scope evaluator that calls a model (a comparison): its
    groups of two or more answers, its calls, and the groups of fewer than two answers it
    skips; their calls are rows of kind ``"compare"``. ``calibrations`` lists the judges
    measured on known pairs before the run (rows of kind ``"calibration"``).
    """

    rows: list[ModelEstimate] = field(default_factory=list)
    groups: list[GroupEstimate] = field(default_factory=list)
    calibrations: list[CalibrationEstimate] = field(default_factory=list)

    def _calls(self, kind: str) -> int:
        return sum(r.calls for r in self.rows if r.kind == kind)

    def _max_calls(self, kind: str) -> int:
        return sum(r.max_calls for r in self.rows if r.kind == kind)

    @property
    def comparison_calls(self) -> int:
        """Calls of group evaluators (comparisons), before parse retries."""
        return self._calls("compare")

    @property
    def candidate_calls(self) -> int:
        """Candidate calls in the plan."""
        return self._calls("candidate")

    @property
    def reference_calls(self) -> int:
        """Reference answers in the plan (see ``Plan.with_references``)."""
        return self._calls("reference")

    @property
    def judge_calls(self) -> int:
        """Criteria judge calls in the plan (one per criterion per answer, or one per answer
        in ``all_criteria`` mode), before parse retries."""
        return self._calls("judge")

    @property
    def max_judge_calls(self) -> int:
        """Criteria judge calls with every parse retry."""
        return self._max_calls("judge")

    @property
    def grader_calls(self) -> int:
        """Field grader calls: at most one per graded answer (none where the rules decide
        every field), before parse retries."""
        return self._calls("grader")

    @property
    def max_grader_calls(self) -> int:
        """Field grader calls with every parse retry."""
        return self._max_calls("grader")

    @property
    def calibration_calls(self) -> int:
        """Calls of the judges' calibrations before the run, before parse retries."""
        return self._calls("calibration")

    @property
    def max_calibration_calls(self) -> int:
        """Calibration calls with every parse retry."""
        return self._max_calls("calibration")

    @property
    def calls(self) -> int:
        """Every model call of the run, each asked once."""
        return sum(r.calls for r in self.rows)

    @property
    def max_calls(self) -> int:
        """Every model call with every re-ask the evaluators allow (not counting retries
        after failed calls)."""
        return sum(r.max_calls for r in self.rows)

    @property
    def input_tokens(self) -> int:
        """All estimated input tokens."""
        return sum(r.input_tokens for r in self.rows)

    @property
    def output_tokens(self) -> int:
        """All estimated output tokens."""
        return sum(r.output_tokens for r in self.rows)

    @property
    def max_input_tokens(self) -> int:
        """Input tokens with every re-ask."""
        return sum(r.max_input_tokens for r in self.rows)

    @property
    def max_output_tokens(self) -> int:
        """Output tokens with every re-ask."""
        return sum(r.max_output_tokens for r in self.rows)

    @property
    def cost_usd(self) -> float | None:
        """Estimated total cost; None when some model has no known price."""
        return _total([r.cost_usd for r in self.rows])

    @property
    def max_cost_usd(self) -> float | None:
        """Estimated total cost with every re-ask; None when some model has no price."""
        return _total([r.max_cost_usd for r in self.rows])


def _total(costs: list[float | None]) -> float | None:
    return None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)


def estimate(
    plan: Plan,
    prices: PriceTable | None,
    *,
    judge: bool = True,
    calibrate: bool = False,
    calibrated: Calibrated | None = None,
) -> Estimate:
    """Estimate calls, tokens (about 4 characters a token) and cost of running ``plan``.

    ``judge``: the run judges (not ``--no-judge``). ``calibrate``: the run calibrates its
    criteria judges first (not ``--no-calibration``); ``calibrated`` says which judges
    have a cached measurement (none is made for those; without it, every judge is
    measured).
    """
    rows: dict[tuple[str, str], ModelEstimate] = {}

    def row(model: str, kind: str) -> ModelEstimate:
        return rows.setdefault((model, kind), ModelEstimate(model, kind))

    evaluators = _response_evaluators(plan) if judge else []
    for item in plan.items:
        row(f"{item.provider}/{item.model}", item.kind).add(
            1, message_tokens(item), answer_tokens(item)
        )
        for evaluator, model in evaluators:
            if item.kind in evaluator.kinds:
                for planned in evaluator.planned_calls([item]):
                    _add(row, planned, model)
    groups = _group_work(plan, row) if judge else []
    calibrations = _calibration_work(evaluators, row, calibrate, calibrated) if judge else []
    for each in rows.values():
        if prices is None:
            each.cost_usd = each.max_cost_usd = None
            continue
        provider, model = each.model.split("/", 1)
        each.cost_usd = prices.cost(provider, model, each.input_tokens, each.output_tokens)
        each.max_cost_usd = prices.cost(
            provider, model, each.max_input_tokens, each.max_output_tokens
        )
    return Estimate(rows=list(rows.values()), groups=groups, calibrations=calibrations)


def _add(row: Callable[[str, str], ModelEstimate], planned: PlannedCalls, model: str) -> None:
    each = row(planned.model or model, planned.kind)
    each.add(planned.calls, planned.input_tokens, planned.output_tokens, planned.retries)


def _response_evaluators(plan: Plan) -> list[tuple[Evaluator, str]]:
    """The run's answer-scope evaluators that call a model, with the model their calls are
    counted on (the entry's, else the plan's judge)."""
    from qualspec.engine._evaluators import create_evaluator

    configs = plan.run_evaluators()
    if not plan.judges and any_item(plan.items, "criteria", lambda item: bool(item.criteria)):
        configs = (plan.default_judge(), *configs)
    out: list[tuple[Evaluator, str]] = []
    for config in configs:
        evaluator = create_evaluator(config)
        if evaluator.scope != "response" or (config.model is None and evaluator.model is None):
            continue
        out.append((evaluator, config.model or plan.judge_model))
    return out


def _calibration_work(
    evaluators: list[tuple[Evaluator, str]],
    row: Callable[[str, str], ModelEstimate],
    calibrate: bool,
    calibrated: Calibrated | None,
) -> list[CalibrationEstimate]:
    """What the evaluators' preparations call before the run (their calibrations on known
    pairs), each counted once per key (as the run makes it once)."""
    out: list[CalibrationEstimate] = []
    seen: set[str] = set()
    for evaluator, model in evaluators:
        for planned in evaluator.planned_preparation(calibrate=calibrate, calibrated=calibrated):
            if planned.key is not None:
                if planned.key in seen:
                    continue
                seen.add(planned.key)
            _add(row, planned, model)
            out.append(
                CalibrationEstimate(
                    planned.model or model,
                    planned.pairs,
                    planned.calls,
                    planned.calls * (1 + max(planned.retries, 0)),
                    planned.role,
                )
            )
    return out


def _group_work(plan: Plan, row: Callable[[str, str], ModelEstimate]) -> list[GroupEstimate]:
    """The groups and calls of each group evaluator that calls a model (comparisons)."""
    from qualspec.engine._evaluators import create_evaluator

    out: list[GroupEstimate] = []
    for config in plan.judges:
        evaluator = create_evaluator(config)
        if evaluator.scope != "group" or evaluator.model is None:
            continue
        judged = skipped = calls = max_calls = 0
        for block in blocks(plan.items):  # a group never leaves its scenario and input row
            for items in _members(evaluator, block).values():
                planned = list(evaluator.planned_calls(items)) if evaluator.aspects(items) else []
                if not planned:
                    skipped += 1
                    continue
                judged += 1
                calls += sum(p.calls for p in planned)
                max_calls += sum(p.calls * (1 + max(p.retries, 0)) for p in planned)
                for each in planned:
                    _add(row, each, evaluator.model)
        out.append(
            GroupEstimate(evaluator.name, evaluator.model, judged, calls, skipped, max_calls)
        )
    return out


def _members(evaluator: Evaluator, items: list[WorkItem]) -> dict[str, list[WorkItem]]:
    """The groups of a block's items (every item a group evaluator places in one)."""
    members: dict[str, list[WorkItem]] = {}
    for item in items:
        group = evaluator.group_of(item)
        if group is not None:
            members.setdefault(group, []).append(item)
    return members
