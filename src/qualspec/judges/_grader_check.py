"""Grader consistency: re-grade the same answers N times; how far do the scores spread?

The **items** of a run are its field grades (records with ``details.type ==
"field_grade"``), or, in a run without them, its criteria judgments (one per answer and
criterion). Each is graded again ``repeats`` times by the evaluator that made it (created
afresh from the run's configuration), on the same answer and the same reference, through
the session: every call limited, retried, costed, recorded and cached like any other.
Repeat ``r`` asks with ``attempt`` offset by ``1000 * (r + 1)``, so the cache never answers
a repeat with the original grade (nor one repeat with another); running the check again
reads the repeats back from the cache.

Per item: the re-grades' scores, their **spread** (max - min, the grade recorded in the
run included: a grader that gave 45 and then 41.4, 37.1, 37.1 spreads 7.9, not 4.3) and
population standard deviation (over the same values); an item is **flagged** when its
spread exceeds ``max_spread`` (default 5% of the scale: 5 points of 100 for field grades,
0.5 of 10 for criteria; the seed's "within 5% across 3 runs"), or, for a field grade, when
any one field's spread (its recorded accuracy included) does: a field that moves 10 points
is inconsistent grading even where the answer's mean hides it. A re-grade that could not
be scored (a failed call, unreadable output) is left out of the spread and counted.
"""

from __future__ import annotations

import asyncio
import logging
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from qualspec.judges._field_rules import is_field_grade

if TYPE_CHECKING:
    from qualspec.engine import Session, Subject, WorkItem
    from qualspec.spec import EvaluatorConfig, ProviderConfig
    from qualspec.store import JudgmentRecord, ResponseRecord, RunRecord

__all__ = [
    "ATTEMPT_STRIDE",
    "SPREAD_SHARE",
    "GradeSpread",
    "GraderCheck",
    "grader_check",
    "grader_check_items",
    "score_text",
]

log = logging.getLogger("qualspec.judges")

SPREAD_SHARE = 0.05
"""The default flag limit as a share of the scale (5 of 100, 0.5 of 10)."""
ATTEMPT_STRIDE = 1000
"""Repeat ``r`` adds ``ATTEMPT_STRIDE * (r + 1)`` to the evaluator's attempts."""


@dataclass(frozen=True, slots=True)
class GradeSpread:
    """One item's re-grades.

    Attributes:
        evaluator: The evaluator that made it.
        response_key: The graded answer.
        criterion: The aspect recorded (a criterion; ``fields`` for a field grade).
        label: ``candidate scenario/input`` (and the criterion) for people.
        original: The score recorded in the run.
        scores: The re-grades' scores (None: unscored), in repeat order.
        spread: Max minus min of the recorded score and the scored re-grades (None:
            none of them scored).
        std: Their population standard deviation.
        field_spreads: Per field, max minus min, its recorded accuracy included (field
            grades only).
        flagged: ``spread > max_spread``, or a field's spread is.
    """

    evaluator: str
    response_key: str
    criterion: str
    label: str
    original: float | None
    scores: tuple[float | None, ...]
    spread: float | None
    std: float | None
    field_spreads: Mapping[str, float] = field(default_factory=dict)
    flagged: bool = False

    @property
    def worst(self) -> float:
        """The larger of the item's spread and its widest field's (0: none)."""
        widest = self.widest_field
        return max(self.spread or 0.0, widest[1] if widest else 0.0)

    @property
    def widest_field(self) -> tuple[str, float] | None:
        """The field that spreads most and its spread (None: no field spreads)."""
        if not self.field_spreads:
            return None
        name = min(self.field_spreads, key=lambda k: (-self.field_spreads[k], k))  # ties: a-z
        return name, self.field_spreads[name]

    def line(self) -> str:
        """One line for people: ``label: recorded 80; 92, 85 (spread 12.0)``, and the field
        that spreads most when one does."""
        shown = ", ".join(score_text(s) for s in self.scores)
        spread = "-" if self.spread is None else f"{self.spread:.1f}"
        recorded = "" if self.original is None else f"recorded {score_text(self.original)}; "
        text = f"{self.label}: {recorded}{shown} (spread {spread}"
        widest = self.widest_field
        if widest is not None and widest[1] > 0:
            text += f"; field {widest[0]} spreads {widest[1]:.1f}"
        return text + ")"


def score_text(value: float | None) -> str:
    """A score for people: one decimal at most (61.4286 -> 61.4, 8.0 -> 8)."""
    return "unscored" if value is None else f"{round(value, 1):g}"


@dataclass(frozen=True, slots=True)
class GraderCheck:
    """The re-grades of a run's items (see the module docstring)."""

    run_id: str
    source: str  # field_grades | criteria
    scale: int
    repeats: int
    max_spread: float
    items: tuple[GradeSpread, ...]
    skipped: int = 0  # items that could not be re-graded (their answer or item is gone)

    @property
    def flagged(self) -> list[GradeSpread]:
        """Items spreading more than ``max_spread``, largest spread first."""
        return sorted((i for i in self.items if i.flagged), key=lambda i: -i.worst)

    @property
    def unscored(self) -> int:
        """Re-grades that could not be scored."""
        return sum(1 for i in self.items for s in i.scores if s is None)

    def _spreads(self) -> list[float]:
        return [i.spread for i in self.items if i.spread is not None]

    @property
    def mean_spread(self) -> float | None:
        """The mean spread over items."""
        spreads = self._spreads()
        return statistics.fmean(spreads) if spreads else None

    @property
    def mean_std(self) -> float | None:
        """The mean standard deviation over items."""
        stds = [i.std for i in self.items if i.std is not None]
        return statistics.fmean(stds) if stds else None

    @property
    def largest_spread(self) -> float | None:
        """The largest spread of any item."""
        spreads = self._spreads()
        return max(spreads) if spreads else None

    @property
    def largest_field_spread(self) -> float | None:
        """The largest spread of any one field (field grades only)."""
        spreads = [v for i in self.items for v in i.field_spreads.values()]
        return max(spreads) if spreads else None

    @property
    def consistent(self) -> bool:
        """No item flagged."""
        return not self.flagged

    def summary(self) -> dict[str, Any]:
        """What ``qualspec grader-check`` records in the run's metadata (``grader_check``)."""

        def rounded(value: float | None) -> float | None:
            return None if value is None else round(value, 3)

        return {
            "source": self.source,
            "scale": self.scale,
            "repeats": self.repeats,
            "items": len(self.items),
            "flagged": len(self.flagged),
            "max_spread": self.max_spread,
            "mean_spread": rounded(self.mean_spread),
            "mean_std": rounded(self.mean_std),
            "largest_spread": rounded(self.largest_spread),
            "largest_field_spread": rounded(self.largest_field_spread),
            "unscored": self.unscored,
            "skipped": self.skipped,
            "flagged_items": [i.line() for i in self.flagged[:20]],
        }


def grader_check_items(run: RunRecord) -> tuple[str, list[JudgmentRecord]]:
    """``(source, records)``: the run's field grades, else its criteria judgments
    (records of evaluators that call a model, comparisons and ``expect:`` checks left out)."""
    current = [j for j in run.judgments if j.error is None and j.judge_model is not None]
    graded = [j for j in current if is_field_grade(j)]
    if graded:
        return "field_grades", graded
    criteria = [
        j
        for j in current
        if j.evaluator != "expect"
        and not (isinstance(j.details, dict) and j.details.get("type") == "comparison")
        and j.subject is None
    ]
    return "criteria", criteria


def _label(responses: Mapping[str, ResponseRecord], j: JudgmentRecord, source: str) -> str:
    response = responses.get(j.response_key)
    where = "?" if response is None else response.candidate
    if response is not None:
        place = response.scenario
        if response.input_id is not None:
            place = f"{place}/{response.input_id}"
        where = f"{response.candidate} {place}"
        if response.role is not None:
            where += f" [{response.role}]"
        if response.temperature is not None:
            where += f" t={response.temperature:g}"
    aspect = "" if source == "field_grades" else f" '{j.criterion}'"
    return f"{where}{aspect} ({j.evaluator})"


def _spread(values: Sequence[float]) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    return max(values) - min(values), statistics.pstdev(values)


async def grader_check(
    session: Session,
    run: RunRecord,
    items: Mapping[str, WorkItem],
    evaluators: Sequence[EvaluatorConfig],
    *,
    repeats: int = 3,
    max_spread: float | None = None,
    providers: Mapping[str, ProviderConfig] | None = None,
) -> GraderCheck:
    """Re-grade ``run``'s items ``repeats`` times (see the module docstring).

    Args:
        session: The open session every call goes through.
        run: The run as stored.
        items: The run's work items by key (the plan that made it), for what each
            evaluator reads of an answer's call (prompt, criteria, input).
        evaluators: The configurations of the run's evaluators (each created afresh per
            repeat, so nothing is shared between repeats).
        repeats: Re-grades per item.
        max_spread: The flag limit (default 5% of the scale).
        providers: Named provider connections (the suite's ``providers:``).

    Raises:
        ConfigError: An evaluator cannot be created, or no item is in ``items`` any more.
    """
    source, records = grader_check_items(run)
    scale = 100 if source == "field_grades" else 10
    limit = SPREAD_SHARE * scale if max_spread is None else max_spread
    responses = {r.key: r for r in run.responses}
    configs = {c.label: c for c in evaluators}
    todo, skipped = _subjects(records, responses, items, configs)
    if not todo and skipped:
        from qualspec.errors import ConfigError

        raise ConfigError(
            f"run {run.summary.id}: none of its {skipped} graded answers is in its suite's "
            "plan any more (the suite file changed since the run, or an evaluator was "
            "removed): restore the suite file as it was for that run"
        )
    rounds = [await _regrade(session, todo, configs, r, providers) for r in range(repeats)]
    out = [
        _grade_spread(j, [rounds[r][n] for r in range(repeats)], source, limit, responses)
        for n, (j, _) in enumerate(todo)
    ]
    return GraderCheck(
        run_id=run.summary.id,
        source=source,
        scale=scale,
        repeats=repeats,
        max_spread=limit,
        items=tuple(out),
        skipped=skipped,
    )


_Regrade = tuple[float | None, "dict[str, float | None] | None"]  # score, per-field scores


def _subjects(
    records: Sequence[JudgmentRecord],
    responses: Mapping[str, ResponseRecord],
    items: Mapping[str, WorkItem],
    configs: Mapping[str, EvaluatorConfig],
) -> tuple[list[tuple[JudgmentRecord, Subject]], int]:
    """Each record to re-grade with its subject, as the run gave it, and how many records
    were skipped (their answer or evaluator is not in the plan any more)."""
    from qualspec.engine import Subject

    todo: list[tuple[JudgmentRecord, Subject]] = []
    skipped = 0
    for j in records:
        response, item = responses.get(j.response_key), items.get(j.response_key)
        if response is None or item is None or j.evaluator not in configs:
            skipped += 1
            continue
        deps = {k: responses[k] for k in item.depends_on if k in responses}
        reference = (j.details or {}).get("reference_key")
        if isinstance(reference, str) and reference in responses:
            deps.setdefault(reference, responses[reference])
        subject = Subject(
            key=j.response_key,
            items=(item,),
            responses=(response,),
            dependencies=deps,
            dependency_items={k: items[k] for k in deps if k in items},
            # the reference's call key, as the run gave it: the grader reads its review
            # (a person's override, the status) as it does during a run
            dependency_call_keys={k: r.call_key for k, r in deps.items() if r.call_key},
        )
        todo.append((j, subject))
    return todo, skipped


async def _regrade(
    session: Session,
    todo: Sequence[tuple[JudgmentRecord, Subject]],
    configs: Mapping[str, EvaluatorConfig],
    r: int,
    providers: Mapping[str, ProviderConfig] | None,
) -> list[_Regrade]:
    """Repeat ``r``: every item graded once more, by evaluators created afresh."""
    from qualspec.engine import create_evaluator
    from qualspec.errors import QualspecError
    from qualspec.judges._session_context import SessionContext

    made = {name: create_evaluator(config) for name, config in configs.items()}
    context = SessionContext(session, attempt_offset=ATTEMPT_STRIDE * (r + 1), providers=providers)

    async def one(j: JudgmentRecord, subject: Subject) -> tuple[float | None, Any]:
        try:
            verdict = await made[j.evaluator].evaluate(subject, j.criterion, context)
        except QualspecError:  # a spent budget, a refused key: the check stops
            raise
        except Exception:  # a bug in a plugin: that re-grade is unscored, as in a run
            log.exception("evaluator %r raised on %s", j.evaluator, j.response_key)
            return None, None
        if verdict.error is not None:
            return None, None
        return verdict.score, verdict.scores

    return list(await asyncio.gather(*(one(j, s) for j, s in todo)))


def _grade_spread(
    j: JudgmentRecord,
    regrades: Sequence[_Regrade],
    source: str,
    limit: float,
    responses: Mapping[str, ResponseRecord],
) -> GradeSpread:
    """How far ``j``'s re-grades (and its recorded grade) spread, flagged over ``limit``."""
    scores = tuple(score for score, _ in regrades)
    # the grade the run recorded is one of the grades: its distance to the re-grades
    # is the inconsistency a user met
    recorded = [] if j.score is None else [j.score]
    spread, std = _spread(recorded + [s for s in scores if s is not None])
    per_field: dict[str, list[float]] = {}
    if source == "field_grades":
        for name, value in (j.scores or {}).items():
            if isinstance(value, int | float):
                per_field.setdefault(name, []).append(float(value))
        for _, fields in regrades:
            for name, value in (fields or {}).items():
                if value is not None:
                    per_field.setdefault(name, []).append(value)
    field_spreads = {k: max(v) - min(v) for k, v in per_field.items()}
    over = (spread is not None and spread > limit + 1e-9) or any(
        v > limit + 1e-9 for v in field_spreads.values()
    )
    return GradeSpread(
        evaluator=j.evaluator,
        response_key=j.response_key,
        criterion=j.criterion,
        label=_label(responses, j, source),
        original=j.score,
        scores=scores,
        spread=spread,
        std=std,
        field_spreads=field_spreads,
        flagged=over,
    )
