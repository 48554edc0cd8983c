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

if TYPE_CHECKING:
    from qualspec.engine._evaluators import Evaluator
    from qualspec.engine._items import WorkItem
    from qualspec.engine._plan import Plan
    from qualspec.judges import CriteriaJudge, FieldGrader
    from qualspec.providers import PriceTable
    from qualspec.spec import EvaluatorConfig

__all__ = ["CalibrationEstimate", "Estimate", "GroupEstimate", "ModelEstimate", "estimate"]

_CHARS_PER_TOKEN = 4
_DEFAULT_OUTPUT_TOKENS = 256
_JUDGE_OUTPUT_TOKENS = 120
_JUDGE_PROMPT_TOKENS = 220  # the judge template itself, measured on the shipped prompt
_PER_MESSAGE_TOKENS = 8

Calibrated = Callable[["CriteriaJudge | FieldGrader", int], bool]
"""Whether a measurement of this judge (or field grader) on that many pairs is cached (so
none is made)."""


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
        prompt_tokens = _message_tokens(item)
        out_tokens = int(item.params.get("max_tokens") or _DEFAULT_OUTPUT_TOKENS)
        row(f"{item.provider}/{item.model}", item.kind).add(1, prompt_tokens, out_tokens)
        for _config, evaluator, model, kind in evaluators:
            kinds = getattr(evaluator, "kinds", None)
            if kinds is not None and item.kind not in kinds:
                continue
            aspects = evaluator.aspects([item])
            if not aspects:
                continue
            retries = int(getattr(evaluator, "parse_retries", 0) or 0)
            answer = len(item.messages[-1].content) // _CHARS_PER_TOKEN + out_tokens
            if getattr(evaluator, "mode", None) == "all_criteria":  # one call for all
                tokens_in = _JUDGE_PROMPT_TOKENS + answer
                row(model, kind).add(1, tokens_in, 2 * _JUDGE_OUTPUT_TOKENS, retries)
                continue
            if kind == "grader":  # the reference and the answer, one call for all fields
                tokens_in = _JUDGE_PROMPT_TOKENS + answer + out_tokens
                row(model, kind).add(1, tokens_in, 2 * _JUDGE_OUTPUT_TOKENS, retries)
                continue
            tokens_in = _JUDGE_PROMPT_TOKENS + answer
            row(model, kind).add(len(aspects), tokens_in, _JUDGE_OUTPUT_TOKENS, retries)
    groups = _group_work(plan, row) if judge else []
    calibrations = _calibration_work(evaluators, row, calibrated) if judge and calibrate else []
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


def _message_tokens(item: WorkItem) -> int:
    return sum(len(m.content) for m in item.messages) // _CHARS_PER_TOKEN + _PER_MESSAGE_TOKENS


_Bound = tuple["EvaluatorConfig", "Evaluator", str, str]


def _response_evaluators(plan: Plan) -> list[_Bound]:
    """The run's answer-scope evaluators that call a model: (config, evaluator, model, row
    kind)."""
    from qualspec.engine._evaluators import create_evaluator
    from qualspec.spec import EvaluatorConfig

    configs = plan.run_evaluators()
    if not plan.judges and any(item.criteria for item in plan.items):
        configs = (EvaluatorConfig(type="criteria", model=plan.judge_model), *configs)
    out: list[_Bound] = []
    for config in configs:
        if config.type == "expect":
            continue  # checks: no model call
        evaluator = create_evaluator(config)
        if evaluator.scope != "response" or (config.model is None and evaluator.model is None):
            continue
        model = config.model or plan.judge_model
        kind = "grader" if config.type == "field_grader" else "judge"
        out.append((config, evaluator, model, kind))
    return out


def _calibration_work(
    evaluators: list[_Bound],
    row: Callable[[str, str], ModelEstimate],
    calibrated: Calibrated | None,
) -> list[CalibrationEstimate]:
    """The calibrations a run makes before it starts (as ``Session._calibrations``): each
    criteria judge's, once per model, mode and parameters, and the field grader's, once per
    model and parameters, unless one is cached."""
    from qualspec.judges import (
        DEFAULT_PAIRS,
        CriteriaJudge,
        FieldGrader,
        calibration_calls,
        calibration_pairs,
    )

    out: list[CalibrationEstimate] = []
    seen: set[str] = set()
    for config, evaluator, model, _kind in evaluators:
        if isinstance(evaluator, FieldGrader):
            out.extend(_grader_calibration_work(evaluator, row, calibrated, seen))
            continue
        if not isinstance(evaluator, CriteriaJudge):
            continue
        pairs = DEFAULT_PAIRS if config.calibrate is None else config.calibrate
        if not pairs:
            continue
        same = repr((model, evaluator.mode, sorted(evaluator.params.items()), pairs))
        if same in seen or (calibrated is not None and calibrated(evaluator, pairs)):
            continue
        seen.add(same)
        chosen = calibration_pairs(pairs)
        calls = calibration_calls(pairs)
        retries = max(evaluator.parse_retries, 0)
        text = sum(len(p["question"]) + len(p["criterion"]) + len(p["good"]) for p in chosen)
        text += sum(len(p["question"]) + len(p["criterion"]) + len(p["bad"]) for p in chosen)
        per_call = _JUDGE_PROMPT_TOKENS + text // max(calls, 1) // _CHARS_PER_TOKEN
        row(model, "calibration").add(calls, per_call, _JUDGE_OUTPUT_TOKENS, retries)
        out.append(CalibrationEstimate(model, len(chosen), calls, calls * (1 + retries)))
    return out


def _grader_calibration_work(
    grader: FieldGrader,
    row: Callable[[str, str], ModelEstimate],
    calibrated: Calibrated | None,
    seen: set[str],
) -> list[CalibrationEstimate]:
    """The field grader's calibration (as ``Session._grader_calibration``): the first
    ``DEFAULT_FIELD_PAIRS`` known field pairs, one call per value (two per pair), each
    re-asked up to the grader's ``parse_retries`` times; none when one is cached."""
    from qualspec.judges import DEFAULT_FIELD_PAIRS, field_calibration_pairs

    if grader.model is None:  # the run measures only a grader with a model
        return []
    model = grader.model  # the model the run calibrates (``Session._grader_calibration``)
    same = repr(("grader", model, sorted(grader.params.items())))
    if same in seen or (calibrated is not None and calibrated(grader, DEFAULT_FIELD_PAIRS)):
        return []
    seen.add(same)
    chosen = field_calibration_pairs(DEFAULT_FIELD_PAIRS)
    calls = 2 * len(chosen)
    retries = max(grader.parse_retries, 0)
    text = sum(
        2 * (len(p["question"]) + len(p["field"]) + len(p["reference"]))
        + len(p["good"])
        + len(p["bad"])
        for p in chosen
    )
    per_call = _JUDGE_PROMPT_TOKENS + text // max(calls, 1) // _CHARS_PER_TOKEN
    row(model, "calibration").add(calls, per_call, _JUDGE_OUTPUT_TOKENS, retries)
    return [CalibrationEstimate(model, len(chosen), calls, calls * (1 + retries), "grader")]


def _group_work(plan: Plan, row: Callable[[str, str], ModelEstimate]) -> list[GroupEstimate]:
    """The groups and calls of each group evaluator that calls a model (comparisons)."""
    from qualspec.engine._evaluators import create_evaluator

    out: list[GroupEstimate] = []
    for config in plan.judges:
        if config.type == "criteria":
            continue
        evaluator = create_evaluator(config)
        if evaluator.scope != "group" or evaluator.model is None:
            continue
        members: dict[str, list[WorkItem]] = {}
        for item in plan.items:
            group = evaluator.group_of(item)
            if group is not None:
                members.setdefault(group, []).append(item)
        per_subject = int(getattr(evaluator, "calls_per_subject", 1))
        retries = max(int(getattr(evaluator, "parse_retries", 0) or 0), 0)
        judged = skipped = calls = 0
        added: list[tuple[int, int]] = []
        for items in members.values():
            aspects = evaluator.aspects(items)
            if not aspects:
                skipped += 1
                continue
            judged += 1
            n = len(aspects) * per_subject
            calls += n
            answers = sum(
                _message_tokens(item)
                - _PER_MESSAGE_TOKENS
                + int(item.params.get("max_tokens") or _DEFAULT_OUTPUT_TOKENS)
                for item in items
            )
            added.append((n, _JUDGE_PROMPT_TOKENS + answers))
        for n, tokens_in in added:
            row(evaluator.model, "compare").add(n, tokens_in, _JUDGE_OUTPUT_TOKENS, retries)
        out.append(
            GroupEstimate(
                evaluator.name, evaluator.model, judged, calls, skipped, calls * (1 + retries)
            )
        )
    return out
