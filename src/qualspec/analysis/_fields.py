"""Aggregation of field grades (reference-graded testing): overall, per model, per input
(difficulty and variance), per field (the most problematic first), and cost per suite
split into agent, reference and grading calls, then per model, per input and per prompt
version (:func:`cost_breakdown`)."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from qualspec.store import JudgmentRecord, ResponseRecord, RunRecord

__all__ = [
    "CallCost",
    "CostBreakdown",
    "GroupCost",
    "FieldAnalysis",
    "FieldStats",
    "GradeGroup",
    "cost_breakdown",
    "field_analysis",
    "field_analysis_to_dict",
    "suite_costs",
]


@dataclass(frozen=True, slots=True)
class GradeGroup:
    """Field grades of a set of answers (a model, an input, the run).

    ``mean`` is the mean of the answers' weighted means (``score``), ``simple_mean`` the
    mean of their simple means; ``variance`` the population variance of the scores (how
    much the answers of an input disagree); ``pass_rate`` and ``field_pass_rate`` are
    percents. ``n_unscored`` answers could not be graded (not in the means).
    """

    n: int
    n_unscored: int
    mean: float | None
    simple_mean: float | None
    variance: float | None
    pass_rate: float | None
    field_pass_rate: float | None
    band: str | None


@dataclass(frozen=True, slots=True)
class FieldStats:
    """One field over a run: mean accuracy, pass rate (percent), match counts."""

    scenario: str
    name: str
    n: int
    mean: float | None
    pass_rate: float | None
    critical: bool
    weight: float
    matches: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FieldAnalysis:
    """The field grades of one run, aggregated."""

    evaluator: str
    threshold: float
    overall: GradeGroup
    by_model: dict[str, GradeGroup]
    # (scenario, input id) -> grades, hardest (lowest mean) first
    by_input: dict[tuple[str, str | None], GradeGroup]
    # the most problematic field first (lowest mean accuracy)
    fields: list[FieldStats]
    flags: dict[str, int]
    errors: int = 0  # grading calls that failed (error records, graded again on resume)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _group(records: Sequence[JudgmentRecord], threshold: float) -> GradeGroup:
    from qualspec.judges import band

    scores = [j.score for j in records if j.score is not None]
    simple = [_number(j, "simple_mean") for j in records]
    rates = [_number(j, "field_pass_rate") for j in records]
    mean = _mean(scores)
    return GradeGroup(
        n=len(records),
        n_unscored=len(records) - len(scores),
        mean=mean,
        simple_mean=_mean([s for s in simple if s is not None]),
        variance=statistics.pvariance(scores) if len(scores) > 1 else (0.0 if scores else None),
        pass_rate=100.0 * sum(1 for s in scores if s >= threshold) / len(scores)
        if scores
        else None,
        field_pass_rate=_mean([r for r in rates if r is not None]),
        band=band(mean),
    )


def _number(record: JudgmentRecord, key: str) -> float | None:
    value = (record.details or {}).get(key)
    return float(value) if isinstance(value, int | float) else None


def field_analysis(run: RunRecord, evaluator: str | None = None) -> FieldAnalysis | None:
    """The run's field grades aggregated, or None when it has none.

    Args:
        run: The run as stored.
        evaluator: Which field grader (default: the first whose records the run holds).

    Example:
        >>> fa = field_analysis(run)
        >>> fa.overall.mean, fa.overall.band, fa.fields[0].name   # the worst field
    """
    from qualspec.judges import is_field_grade

    every = [j for j in run.judgments if is_field_grade(j)]
    if evaluator is None and every:
        evaluator = every[0].evaluator
    every = [j for j in every if j.evaluator == evaluator]
    records = [j for j in every if j.error is None]  # a failed grading call has no grades
    if not every or evaluator is None:
        return None
    threshold = next((j.threshold for j in records if j.threshold is not None), 80.0)
    responses = {r.key: r for r in run.responses}
    by_model: dict[str, list[JudgmentRecord]] = {}
    by_input: dict[tuple[str, str | None], list[JudgmentRecord]] = {}
    for j in records:
        response = responses.get(j.response_key)
        if response is None:
            continue
        by_model.setdefault(response.candidate, []).append(j)
        by_input.setdefault((response.scenario, response.input_id), []).append(j)
    inputs = {k: _group(v, threshold) for k, v in by_input.items()}
    hardest = sorted(inputs, key=lambda k: (inputs[k].mean is None, inputs[k].mean or 0.0))
    flags: dict[str, int] = {}
    for j in every:
        for flag in (j.details or {}).get("flags") or ():
            flags[str(flag)] = flags.get(str(flag), 0) + 1
    return FieldAnalysis(
        evaluator=evaluator,
        threshold=threshold,
        overall=_group(records, threshold),
        by_model={k: _group(v, threshold) for k, v in sorted(by_model.items())},
        by_input={k: inputs[k] for k in hardest},
        fields=_fields(records, responses, threshold),
        flags=dict(sorted(flags.items())),
        errors=len(every) - len(records),
    )


def _fields(
    records: Iterable[JudgmentRecord], responses: Mapping[str, ResponseRecord], threshold: float
) -> list[FieldStats]:
    found: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for j in records:
        response = responses.get(j.response_key)
        scenario = response.scenario if response is not None else ""
        for name, entry in ((j.details or {}).get("fields") or {}).items():
            if isinstance(entry, Mapping):
                found.setdefault((scenario, str(name)), []).append(entry)
    out: list[FieldStats] = []
    for (scenario, name), entries in found.items():
        values = [
            float(e["accuracy"]) for e in entries if isinstance(e.get("accuracy"), int | float)
        ]
        matches: dict[str, int] = {}
        for e in entries:
            matches[str(e.get("match"))] = matches.get(str(e.get("match")), 0) + 1
        out.append(
            FieldStats(
                scenario=scenario,
                name=name,
                n=len(values),
                mean=_mean(values),
                pass_rate=100.0 * sum(1 for v in values if v >= threshold) / len(values)
                if values
                else None,
                critical=bool(entries[0].get("critical")),
                weight=float(entries[0].get("weight") or 1.0),
                matches=dict(sorted(matches.items())),
            )
        )
    out.sort(key=lambda f: (f.mean is None, f.mean if f.mean is not None else 0.0, f.name))
    return out


@dataclass(frozen=True, slots=True)
class CallCost:
    """Calls of one kind (agent, reference, grading): how many, how many came from the
    cache (costing nothing), tokens, and cost (None when a price is unknown)."""

    calls: int
    cached: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None


def _cost_of(records: Sequence[ResponseRecord | JudgmentRecord]) -> CallCost:
    # a field grade decided by rules alone made no call (no judge key): it costs nothing
    records = [r for r in records if not isinstance(r, JudgmentRecord) or r.judge_key]
    cost: float | None = 0.0
    for r in records:
        if r.error is None and not r.cached and r.cost_usd is None:
            if isinstance(r, JudgmentRecord) and r.judge_model is None:
                continue
            cost = None
        elif cost is not None:
            cost += r.cost_usd or 0.0
    return CallCost(
        calls=len(records),
        cached=sum(1 for r in records if r.cached),
        input_tokens=sum(r.input_tokens or 0 for r in records),
        output_tokens=sum(r.output_tokens or 0 for r in records),
        cost_usd=cost,
    )


def suite_costs(run: RunRecord) -> dict[str, CallCost]:
    """Tokens and cost of a run's ``agent`` (candidate), ``reference`` and ``grading``
    (field grader) calls. A cached call counts its tokens but costs nothing (saved)."""
    from qualspec.judges import is_field_grade

    return {
        "agent": _cost_of([r for r in run.responses if r.kind == "candidate"]),
        "reference": _cost_of([r for r in run.responses if r.kind == "reference"]),
        "grading": _cost_of([j for j in run.judgments if is_field_grade(j)]),
    }


@dataclass(frozen=True, slots=True)
class GroupCost:
    """The calls of one group (a model, an input, a prompt version) by kind, and their sum.

    ``cost_usd`` is None when a price is unknown for any of them; a cached call counts its
    tokens but costs nothing.
    """

    agent: CallCost
    reference: CallCost
    grading: CallCost

    @property
    def calls(self) -> int:
        """Every call of the group."""
        return self.agent.calls + self.reference.calls + self.grading.calls

    @property
    def cached(self) -> int:
        """The calls answered from the cache."""
        return self.agent.cached + self.reference.cached + self.grading.cached

    @property
    def input_tokens(self) -> int:
        """Input tokens of every call."""
        return self.agent.input_tokens + self.reference.input_tokens + self.grading.input_tokens

    @property
    def output_tokens(self) -> int:
        """Output tokens of every call."""
        return self.agent.output_tokens + self.reference.output_tokens + self.grading.output_tokens

    @property
    def cost_usd(self) -> float | None:
        """The sum of the costs (None when one is unknown)."""
        costs = [self.agent.cost_usd, self.reference.cost_usd, self.grading.cost_usd]
        return None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)


@dataclass(frozen=True, slots=True)
class CostBreakdown:
    """Tokens and cost of a reference-graded run, split three ways.

    * ``by_model``: each candidate's own calls (its answers) and the grading of its answers;
      the reference answers are shared by every model, so they are not in a model's row
      (they are in ``by_input``).
    * ``by_input``: per (scenario, input id), every call made for it: the candidates'
      answers, the reference answer and the grading.
    * ``by_prompt_version``: per version of a prompt part the candidates were sent
      (``scenario_prompt:company_profile v2``, a role's preamble, a system prompt), the
      candidate calls that sent it and the grading of their answers. A call sends several
      parts, so it counts under each: the rows do not add up to the run's total.
    """

    by_model: dict[str, GroupCost]
    by_input: dict[tuple[str, str | None], GroupCost]
    by_prompt_version: dict[str, GroupCost]


def _prompt_label(part: str, version_id: int, prompts: Mapping[int, tuple[str, int]]) -> str:
    found = prompts.get(version_id)
    if found is not None:
        return f"{found[0]} v{found[1]}"
    # a run read without its store: a run sends one text per part, so the part names it
    # (store ids mean nothing outside the database and are never shown)
    return part


def cost_breakdown(
    run: RunRecord, prompts: Mapping[int, tuple[str, int]] | None = None
) -> CostBreakdown:
    """The run's calls costed per model, per input and per prompt version (see
    :class:`CostBreakdown`).

    Args:
        run: The run as stored.
        prompts: Prompt version id -> (name, version) (``qualspec.report.prompt_refs``), to
            name the versions as ``qualspec prompts show`` takes them; without it a version
            is named by its part alone (a run sends one text per part).

    Example:
        >>> costs = cost_breakdown(run, prompt_refs(store, run))
        >>> costs.by_model["gpt"].cost_usd, costs.by_prompt_version
    """
    from qualspec.judges import is_field_grade

    refs = prompts or {}
    live = [r for r in run.responses if not r.superseded]
    grades: dict[str, list[JudgmentRecord]] = {}
    for j in run.judgments:
        if is_field_grade(j):
            grades.setdefault(j.response_key, []).append(j)
    Bucket = dict[str, list[ResponseRecord | JudgmentRecord]]
    by_model: dict[str, Bucket] = {}
    by_input: dict[tuple[str, str | None], Bucket] = {}
    by_version: dict[str, Bucket] = {}

    def add(buckets: Bucket, kind: str, records: Sequence[ResponseRecord | JudgmentRecord]) -> None:
        buckets.setdefault(kind, []).extend(records)

    for r in live:
        where = by_input.setdefault((r.scenario, r.input_id), {})
        if r.kind == "reference":
            add(where, "reference", [r])
            continue
        if r.kind != "candidate":
            continue
        graded = grades.get(r.key, [])
        for buckets in (by_model.setdefault(r.candidate, {}), where):
            add(buckets, "agent", [r])
            add(buckets, "grading", graded)
        for part, version_id in sorted(r.prompt_versions.items()):
            label = _prompt_label(part, version_id, refs)
            add(by_version.setdefault(label, {}), "agent", [r])
            add(by_version[label], "grading", graded)

    def total(buckets: Bucket) -> GroupCost:
        return GroupCost(
            agent=_cost_of(buckets.get("agent", [])),
            reference=_cost_of(buckets.get("reference", [])),
            grading=_cost_of(buckets.get("grading", [])),
        )

    return CostBreakdown(
        by_model={k: total(v) for k, v in sorted(by_model.items())},
        by_input={k: total(v) for k, v in by_input.items()},
        by_prompt_version={k: total(v) for k, v in sorted(by_version.items())},
    )


def _call_cost_dict(c: CallCost | GroupCost) -> dict[str, Any]:
    return {
        "calls": c.calls,
        "cached": c.cached,
        "input_tokens": c.input_tokens,
        "output_tokens": c.output_tokens,
        "cost_usd": c.cost_usd,
    }


def _group_cost_dict(g: GroupCost) -> dict[str, Any]:
    return {
        **_call_cost_dict(g),
        "agent": _call_cost_dict(g.agent),
        "reference": _call_cost_dict(g.reference),
        "grading": _call_cost_dict(g.grading),
    }


def _group_dict(group: GradeGroup) -> dict[str, Any]:
    return {
        "n": group.n,
        "unscored": group.n_unscored,
        "mean": group.mean,
        "simple_mean": group.simple_mean,
        "variance": group.variance,
        "pass_rate": group.pass_rate,
        "field_pass_rate": group.field_pass_rate,
        "band": group.band,
    }


def field_analysis_to_dict(
    analysis: FieldAnalysis,
    run: RunRecord | None = None,
    prompts: Mapping[int, tuple[str, int]] | None = None,
) -> dict[str, Any]:
    """The analysis as plain JSON data (the results file's ``field_grades``); with ``run``,
    its ``costs`` per kind of call and ``cost_breakdown`` per model, input and prompt
    version (``prompts`` names the versions: see :func:`cost_breakdown`)."""
    out: dict[str, Any] = {
        "evaluator": analysis.evaluator,
        "threshold": analysis.threshold,
        "overall": _group_dict(analysis.overall),
        "by_model": {k: _group_dict(v) for k, v in analysis.by_model.items()},
        "by_input": [
            {"scenario": s, "input_id": i, "difficulty": g.mean, **_group_dict(g)}
            for (s, i), g in analysis.by_input.items()
        ],
        "fields": [
            {
                "scenario": f.scenario,
                "field": f.name,
                "n": f.n,
                "mean": f.mean,
                "pass_rate": f.pass_rate,
                "critical": f.critical,
                "weight": f.weight,
                "matches": f.matches,
            }
            for f in analysis.fields
        ],
        "flags": analysis.flags,
        "errors": analysis.errors,
    }
    if run is not None:
        out["costs"] = {kind: _call_cost_dict(c) for kind, c in suite_costs(run).items()}
        breakdown = cost_breakdown(run, prompts)
        out["cost_breakdown"] = {
            "by_model": {k: _group_cost_dict(g) for k, g in breakdown.by_model.items()},
            "by_input": [
                {"scenario": s, "input_id": i, **_group_cost_dict(g)}
                for (s, i), g in breakdown.by_input.items()
            ],
            "by_prompt_version": {
                k: _group_cost_dict(g) for k, g in breakdown.by_prompt_version.items()
            },
        }
    return out
