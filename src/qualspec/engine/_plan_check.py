"""``check_plan``: before anything is called or loaded, that every model of a plan can be
used and (judged) that every scenario has something to judge, as one ``SpecError`` with
an issue per field, or a ``ConfigError`` for a value from the command line."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from qualspec.engine._items import WorkItem
from qualspec.engine._selection import split_model
from qualspec.errors import ConfigError

if TYPE_CHECKING:
    from qualspec.engine import Plan  # the package's name: no file cycle (see tests)
    from qualspec.spec import LoadedSuite

__all__ = ["PlanSurvey", "check_plan", "survey"]

_OTHER_JUDGE = "choose another judge with --judge PROVIDER/MODEL or judge: in the suite"


def check_plan(suite: LoadedSuite, plan: Plan, *, judge: bool = True) -> None:
    """Check, calling and loading nothing, that every model of ``plan`` can be used.

    Every provider must be registered or defined under ``providers:``, the packages it
    needs installed and a local model file present; every evaluator type must load.
    No API key is needed. Judged, every selected scenario must have something to judge.
    ``judge=False`` (``--no-judge``) leaves the evaluators out.

    Raises:
        SpecError: For models and evaluators named in the suite, at their fields, and
            scenarios with nothing to judge.
        ConfigError: For a model given by ``--model``/``--judge``, or the default judge.
    """
    from qualspec.engine._checks import check_judged
    from qualspec.errors import SpecError, SpecIssue
    from qualspec.providers import ProviderPool

    if judge:  # a scenario with nothing to judge: fine with --no-judge, an error judged
        check_judged(suite, plan)
    evaluation = suite.evaluation
    pool = ProviderPool(evaluation.providers)
    issues: list[SpecIssue] = []
    index = {c.name: i for i, c in enumerate(evaluation.candidates)}
    found = plan.survey
    if found.orphan is not None:
        raise ConfigError(found.orphan)
    for address in found.others:
        pool.check(address)  # a reference model: ConfigError names it
    for name, address in found.candidates:
        position = index[name]
        try:
            pool.check(address)
        except ConfigError as exc:
            if _address(evaluation.candidates[position].model) != address:
                raise ConfigError(f"--model {address}: {exc}") from None
            issues.append(suite.issue(("candidates", position, "model"), _sentence(exc)))
    if judge and plan.items:
        issues.extend(_check_judges(suite, plan, pool))
    if issues:
        raise SpecError(issues)


@dataclass(frozen=True)
class PlanSurvey:
    """What one pass over a plan's items finds (a plan of any size: one scenario and
    input row held at a time): the model addresses of items of other kinds than
    candidate, each candidate's ``(name, address)``, the ``(name, text)`` of every
    prompt part sent, and the first item whose dependency is not before it in its
    scenario and input row (as :meth:`Plan.with_references` places reference answers)."""

    others: tuple[str, ...]
    candidates: tuple[tuple[str, str], ...]
    prompt_parts: frozenset[tuple[str, str]]
    orphan: str | None = None


def survey(items: Iterable[WorkItem]) -> PlanSurvey:
    """One pass over ``items``: see :class:`PlanSurvey`."""
    others: dict[str, None] = {}
    candidates: dict[tuple[str, str], None] = {}
    parts: set[tuple[str, str]] = set()
    block: tuple[str, str | None] | None = None
    keys: set[str] = set()
    orphan: str | None = None
    for item in items:
        if (item.scenario, item.input_id) != block:
            block, keys = (item.scenario, item.input_id), set()
        missing = [k for k in item.depends_on if k not in keys]
        if missing and orphan is None:
            orphan = (
                f"work item {item.key} ({item.scenario}) depends on {missing[0]}, which is "
                "not before it in its scenario and input row: add the item it depends on "
                "(e.g. Plan.with_references)"
            )
        keys.add(item.key)
        address = f"{item.provider}/{item.model}"
        if item.kind == "candidate":
            candidates[(item.candidate, address)] = None
        else:
            others[address] = None
        parts.update(item.prompt_parts.items())
    return PlanSurvey(tuple(others), tuple(candidates), frozenset(parts), orphan)


def _check_judges(suite: LoadedSuite, plan: Plan, pool: Any) -> list[Any]:
    from qualspec.engine._evaluators import create_evaluator

    evaluation = suite.evaluation
    originals = evaluation.evaluator_configs()
    in_suite = bool(evaluation.judges) or "judge" in evaluation.model_fields_set
    issues = []
    used = plan.run_evaluators()
    # the suite's evaluators: its judges, the field grader, then one per comparisons: entry
    first_compared = len(plan.judges) - len(evaluation.comparisons)
    for i, config in enumerate(plan.judges):
        if config not in used:  # a criteria judge of a plan without criteria: never called
            continue
        field: tuple[str | int, ...] = ("judges", i) if evaluation.judges else ("judge",)
        compared = i >= first_compared
        if compared:  # an entry of comparisons:
            field = ("comparisons", i - first_compared)
        evaluator = create_evaluator(config)  # an unknown type: ConfigError
        model = evaluator.model
        if model is None:
            continue
        if config.panel:  # a panel: each member's model, an issue at its line
            for k, member in enumerate(config.panel):
                try:
                    pool.check(member.model)
                except ConfigError as exc:
                    message = f"the judge {member.model} cannot run: {_sentence(exc)}"
                    issues.append(suite.issue((*field, "panel", k, "model"), message))
            continue
        try:
            pool.check(model)
        except ConfigError as exc:
            original = originals[i].model if i < len(originals) else None
            if config.model is not None and (original is None or config.model != original):
                raise ConfigError(f"--judge {model}: {exc}") from None
            if compared and evaluation.comparisons[i - first_compared].model is not None:
                pass  # its own model: an issue at its line
            elif not in_suite or original is None:
                raise ConfigError(
                    f"the default judge {model} cannot run: {exc}; {_OTHER_JUDGE} "
                    "(or run with --no-judge)"
                ) from None
            message = f"the judge {model} cannot run: {_sentence(exc)}; or {_OTHER_JUDGE}"
            issues.append(suite.issue((*field, "model"), message))
    return issues


def _address(text: str) -> str:
    return "/".join(split_model(text))


def _sentence(exc: Exception) -> str:
    """An error message as the tail of an issue line (lower-case first word)."""
    text = str(exc)
    return text[:1].lower() + text[1:] if text[1:2].islower() else text
