"""Dry-run estimates: calls, tokens and cost per model, before anything is called."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qualspec.engine._items import WorkItem
    from qualspec.engine._plan import Plan
    from qualspec.providers import PriceTable

__all__ = ["Estimate", "GroupEstimate", "ModelEstimate", "estimate"]

_CHARS_PER_TOKEN = 4
_DEFAULT_OUTPUT_TOKENS = 256
_JUDGE_OUTPUT_TOKENS = 120
_JUDGE_PROMPT_TOKENS = 220  # the judge template itself, measured on the shipped prompt


@dataclass
class ModelEstimate:
    """Estimated calls, tokens and cost for one model address in one role (``kind``:
    candidate, reference, judge)."""

    model: str
    kind: str
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0


@dataclass(frozen=True)
class GroupEstimate:
    """A group evaluator's work (a comparison): groups judged, calls, groups skipped."""

    name: str
    model: str
    groups: int
    calls: int
    skipped: int


@dataclass
class Estimate:
    """A dry run's numbers.

    ``groups`` lists each group-scope evaluator that calls a model (a comparison): its
    groups of two or more answers, its calls (before parse retries), and the groups of
    fewer than two answers it skips; their calls are rows of kind ``"compare"``.
    """

    rows: list[ModelEstimate] = field(default_factory=list)
    groups: list[GroupEstimate] = field(default_factory=list)

    @property
    def comparison_calls(self) -> int:
        """Calls of group evaluators (comparisons), before parse retries."""
        return sum(r.calls for r in self.rows if r.kind == "compare")

    @property
    def candidate_calls(self) -> int:
        """Candidate calls in the plan."""
        return sum(r.calls for r in self.rows if r.kind == "candidate")

    @property
    def reference_calls(self) -> int:
        """Reference answers in the plan (see ``Plan.with_references``)."""
        return sum(r.calls for r in self.rows if r.kind == "reference")

    @property
    def judge_calls(self) -> int:
        """Judge calls in the plan (one per criterion per answer, before parse retries)."""
        return sum(r.calls for r in self.rows if r.kind == "judge")

    @property
    def input_tokens(self) -> int:
        """All estimated input tokens."""
        return sum(r.input_tokens for r in self.rows)

    @property
    def output_tokens(self) -> int:
        """All estimated output tokens."""
        return sum(r.output_tokens for r in self.rows)

    @property
    def cost_usd(self) -> float | None:
        """Estimated total cost; None when some model has no known price."""
        costs = [r.cost_usd for r in self.rows]
        return None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)


def estimate(plan: Plan, prices: PriceTable | None, *, judge: bool = True) -> Estimate:
    """Estimate tokens (about 4 characters a token) and cost of running ``plan``."""
    rows: dict[tuple[str, str], ModelEstimate] = {}
    # every criteria judge scores every criterion; other evaluators' calls are their own
    judge_models = [j.model or plan.judge_model for j in plan.judges if j.type == "criteria"]
    if not plan.judges:
        judge_models = [plan.judge_model]
    for item in plan.items:
        address = f"{item.provider}/{item.model}"
        row = rows.setdefault((address, item.kind), ModelEstimate(address, item.kind))
        prompt_tokens = sum(len(m.content) for m in item.messages) // _CHARS_PER_TOKEN + 8
        out_tokens = int(item.params.get("max_tokens") or _DEFAULT_OUTPUT_TOKENS)
        row.calls += 1
        row.input_tokens += prompt_tokens
        row.output_tokens += out_tokens
        if not (judge and item.criteria):
            continue
        user = item.messages[-1].content
        per_call = _JUDGE_PROMPT_TOKENS + (len(user) // _CHARS_PER_TOKEN) + out_tokens
        for judge_model in judge_models:
            jrow = rows.setdefault((judge_model, "judge"), ModelEstimate(judge_model, "judge"))
            jrow.calls += len(item.criteria)
            jrow.input_tokens += per_call * len(item.criteria)
            jrow.output_tokens += _JUDGE_OUTPUT_TOKENS * len(item.criteria)
    groups = _group_work(plan, rows) if judge else []
    for row in rows.values():
        if prices is None:
            row.cost_usd = None
            continue
        provider, model = row.model.split("/", 1)
        row.cost_usd = prices.cost(provider, model, row.input_tokens, row.output_tokens)
    return Estimate(rows=list(rows.values()), groups=groups)


def _group_work(plan: Plan, rows: dict[tuple[str, str], ModelEstimate]) -> list[GroupEstimate]:
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
        judged = skipped = calls = tokens_in = tokens_out = 0
        for items in members.values():
            aspects = evaluator.aspects(items)
            if not aspects:
                skipped += 1
                continue
            judged += 1
            n = len(aspects) * per_subject
            calls += n
            answers = sum(
                sum(len(m.content) for m in item.messages) // _CHARS_PER_TOKEN
                + int(item.params.get("max_tokens") or _DEFAULT_OUTPUT_TOKENS)
                for item in items
            )
            tokens_in += n * (_JUDGE_PROMPT_TOKENS + answers)
            tokens_out += n * _JUDGE_OUTPUT_TOKENS
        if calls:
            key = (evaluator.model, "compare")
            row = rows.setdefault(key, ModelEstimate(evaluator.model, "compare"))
            row.calls += calls
            row.input_tokens += tokens_in
            row.output_tokens += tokens_out
        out.append(GroupEstimate(evaluator.name, evaluator.model, judged, calls, skipped))
    return out
