"""``qualspec compare``: two runs paired unit by unit, with statistical confidence.

A **unit** is one (candidate, role, scenario, input, temperature, aspect) of a run; its
value is the mean over run indexes of what was scored for it:

* **field grades** (records of the reference field grader, ``details.type ==
  "field_grade"``): the aspect is a field, the value its accuracy 0-100 (``scores``);
* otherwise **criteria judgments** (every scored judge record but ``expect:`` checks,
  comparisons and field grades): the aspect is a criterion, the value its score 0-10.

Field grades are compared when both runs have them, else criteria judgments, so two runs
without a reference can be compared too. Units present in both runs are **paired**;
:func:`~qualspec.analysis.compare_paired` compares them overall, per aspect (field or
criterion), per input and per candidate. ``has_regression`` is the overall verdict being
``regressed``: what ``qualspec compare --fail-on-regression`` exits 1 on (the breakdowns
are many tests at once, so a single one of them regressing by chance is likely; they are
reported, not enforced).

Field grades are only comparable against the same references: ``references``
(:func:`~qualspec.analysis.reference_changes`) lists the inputs the two runs graded
against different references (another prompt version or model asked, another answer, an
override), and the report warns "reference changed for N inputs".
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal

from qualspec.analysis._aggregate import CHECKS_EVALUATOR
from qualspec.analysis._answers import criterion_label
from qualspec.analysis._reference_changes import ReferenceChanges, reference_changes
from qualspec.analysis._stats import PairedComparison, compare_paired, stat_seed
from qualspec.store import JudgmentRecord, RunRecord

__all__ = [
    "CompareSource",
    "RunComparison",
    "ScopedComparison",
    "UnitKey",
    "compare_runs",
    "field_values",
    "unit_values",
]

CompareSource = Literal["field_grades", "criteria"]

UnitKey = tuple[str, str | None, str, str | None, float | None, str]
"""(candidate, role, scenario, input_id, temperature, aspect)."""


def field_values(judgment: JudgmentRecord) -> dict[str, float]:
    """A field grade's accuracy per field (0-100), the fields that were graded only."""
    out: dict[str, float] = {}
    for name, value in (judgment.scores or {}).items():
        if value is not None:
            out[name] = float(value)
    if out:
        return out
    fields = (judgment.details or {}).get("fields")
    if isinstance(fields, dict):
        for name, info in fields.items():
            accuracy = info.get("accuracy") if isinstance(info, dict) else None
            if isinstance(accuracy, int | float):
                out[str(name)] = float(accuracy)
    return out


def _is_criteria(judgment: JudgmentRecord) -> bool:
    details = judgment.details
    if isinstance(details, dict) and details.get("type") in ("comparison", "field_grade"):
        return False
    return judgment.evaluator != CHECKS_EVALUATOR and judgment.score is not None


def unit_values(run: RunRecord, source: CompareSource) -> dict[UnitKey, float]:
    """Every unit of ``run`` with its value (mean over run indexes), in stored order."""
    from qualspec.judges import is_field_grade

    responses = {r.key: r for r in run.responses}
    values: dict[UnitKey, list[float]] = {}
    for j in run.judgments:
        if j.error is not None:
            continue
        response = responses.get(j.response_key)
        if response is None:
            continue
        if source == "field_grades":
            if not is_field_grade(j):
                continue
            scored = field_values(j)
        else:
            if not _is_criteria(j) or j.score is None:
                continue
            scored = {criterion_label(j): j.score}
        temperature = None if response.temperature is None else float(response.temperature)
        for aspect, value in scored.items():
            key = (
                response.candidate,
                response.role,
                response.scenario,
                response.input_id,
                temperature,
                aspect,
            )
            values.setdefault(key, []).append(value)
    return {key: statistics.fmean(v) for key, v in values.items()}


@dataclass(frozen=True, slots=True)
class ScopedComparison:
    """The comparison of the pairs of one scope: ``name`` of a field, input or candidate."""

    name: str
    result: PairedComparison


@dataclass(frozen=True, slots=True)
class RunComparison:
    """Run A (before) against run B (after), see the module docstring.

    Attributes:
        scale: 100 for field grades (accuracy 0-100), 10 for criteria scores (0-10).
        overall: Every pair (None when no unit is in both runs).
        by_aspect: Per field (or criterion), worst difference first.
        by_input: Per input (``scenario/input``, or the scenario for one without inputs).
        by_candidate: Per candidate.
        only_a: Units of A without a partner in B; ``only_b`` the reverse.
        references: The inputs graded against different references (field grades only;
            None for criteria).
    """

    run_a: str
    run_b: str
    suite_a: str
    suite_b: str
    source: CompareSource
    scale: int
    overall: PairedComparison | None
    by_aspect: list[ScopedComparison] = field(default_factory=list)
    by_input: list[ScopedComparison] = field(default_factory=list)
    by_candidate: list[ScopedComparison] = field(default_factory=list)
    only_a: int = 0
    only_b: int = 0
    references: ReferenceChanges | None = None

    @property
    def aspect_name(self) -> str:
        """``field`` or ``criterion``."""
        return "field" if self.source == "field_grades" else "criterion"

    @property
    def has_regression(self) -> bool:
        """The overall verdict is ``regressed`` (significant, interval below 0)."""
        return self.overall is not None and self.overall.verdict == "regressed"


def _source(a: RunRecord, b: RunRecord) -> CompareSource:
    from qualspec.judges import is_field_grade

    def graded(run: RunRecord) -> bool:
        return any(is_field_grade(j) for j in run.judgments)

    return "field_grades" if graded(a) and graded(b) else "criteria"


def _input_name(key: UnitKey) -> str:
    scenario, input_id = key[2], key[3]
    return scenario if input_id is None else f"{scenario}/{input_id}"


def _scoped(
    pairs: list[tuple[UnitKey, float, float]],
    name_of: Callable[[UnitKey], str],
    seed_names: tuple[str, ...],
) -> list[ScopedComparison]:
    groups: dict[str, list[tuple[float, float]]] = {}
    for key, x, y in pairs:
        groups.setdefault(name_of(key), []).append((x, y))
    out = [
        ScopedComparison(name, _compare(values, (*seed_names, name)))
        for name, values in groups.items()
    ]
    out.sort(key=lambda s: (s.result.difference, s.name))
    return out


def _compare(values: Iterable[tuple[float, float]], names: tuple[str, ...]) -> PairedComparison:
    xs, ys = zip(*values, strict=True)
    return compare_paired(xs, ys, seed=stat_seed(*names))


def compare_runs(a: RunRecord, b: RunRecord) -> RunComparison:
    """Compare run ``a`` (before, the baseline) with run ``b`` (after), with confidence.

    Example:
        >>> result = compare_runs(store.load_run(v1_run), store.load_run(v2_run))
        >>> result.overall.difference, result.overall.verdict
        (8.5, 'improved')
    """
    source = _source(a, b)
    units_a, units_b = unit_values(a, source), unit_values(b, source)
    pairs = [(key, value, units_b[key]) for key, value in units_a.items() if key in units_b]
    ids = (a.summary.id, b.summary.id)
    overall = _compare(((x, y) for _, x, y in pairs), (*ids, "overall")) if pairs else None
    return RunComparison(
        run_a=a.summary.id,
        run_b=b.summary.id,
        suite_a=a.summary.suite_name,
        suite_b=b.summary.suite_name,
        source=source,
        scale=100 if source == "field_grades" else 10,
        overall=overall,
        by_aspect=_scoped(pairs, lambda k: k[5], (*ids, "aspect")),
        by_input=_scoped(pairs, _input_name, (*ids, "input")),
        by_candidate=_scoped(pairs, lambda k: k[0], (*ids, "candidate")),
        only_a=sum(1 for k in units_a if k not in units_b),
        only_b=sum(1 for k in units_b if k not in units_a),
        references=reference_changes(a, b) if source == "field_grades" else None,
    )
