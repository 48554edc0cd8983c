"""The plan: a loaded suite expanded into work items, with filters and overrides applied.

Expansion order is scenario -> input row -> role -> candidate -> temperature -> run. The
prompt sent is the role's preamble, a blank line, and the scenario prompt rendered with the
input row; the system prompt is the first set of role > scenario > candidate.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from qualspec.engine._items import WorkItem
from qualspec.engine._lazy import LazyItems, any_item, with_reference_items
from qualspec.engine._matrix import (
    check_seed,
    criteria_at,
    matrix,
    matrix_survey,
    prompts_per_row,
    scenario_rows,
)
from qualspec.engine._plan_check import PlanSurvey, check_plan, survey
from qualspec.engine._selection import parse_temperatures, run_temperatures, select, split_model
from qualspec.errors import ConfigError

if TYPE_CHECKING:
    from qualspec.engine._evaluators import Evaluator
    from qualspec.spec import Candidate, EvaluatorConfig, InputRow, LoadedSuite, Role, Scenario

__all__ = ["LazyItems", "Plan", "check_plan", "expand", "parse_temperatures"]

_CHARS_PER_TOKEN = 4
_DEFAULT_OUTPUT_TOKENS = 256
_JUDGE_TEMPLATE_CHARS = 900  # the judge instructions around prompt, answer and criterion
_KEPT_ITEMS = 5_000  # a plan of up to this many cells is built once, not on every walk


@dataclass(frozen=True)
class Plan:
    """Every call of a run, in expansion order, and the dimensions it came from.

    ``items`` are the candidate cells, and the items of other kinds they depend on
    (reference answers, added by :meth:`with_references`) ahead of them. A plan from
    :func:`expand` produces them on demand (:class:`LazyItems`: each pass expands the
    suite again, inputs files read row by row), so a plan of any size is small; iterate
    it (``for item in plan.items``) rather than index it at scale.
    ``roles`` is empty when the suite has none; ``n_inputs`` counts input rows over the
    selected scenarios (1 for a scenario without inputs).
    """

    items: Sequence[WorkItem]
    candidates: tuple[str, ...]
    roles: tuple[str, ...]
    scenarios: tuple[str, ...]
    # None: no temperature is sent (the provider's default)
    temperatures: tuple[float | None, ...]
    runs: int
    judge_model: str
    threshold: float
    n_inputs: int
    judge_max_tokens: int | None = None
    # the run's evaluators (``judges:``, or the one criteria judge of ``judge:``)
    judges: tuple[EvaluatorConfig, ...] = ()
    # one line each, for people: what the plan will not do that the suite seems to ask
    # (an ``at_temperature`` entry at a temperature the run does not use)
    warnings: tuple[str, ...] = ()
    # input rows over the selected scenarios that have inputs (None: count the items')
    input_rows: int | None = None

    @property
    def rows(self) -> int:
        """Input rows over the scenarios with inputs (counted without a list)."""
        if self.input_rows is not None:
            return self.input_rows
        rows, last = 0, None
        for item in self.items:  # a row's items are consecutive
            if item.input_id is not None and (item.scenario, item.input_id) != last:
                rows, last = rows + 1, (item.scenario, item.input_id)
        return rows

    @functools.cached_property
    def survey(self) -> PlanSurvey:
        """Their models, candidates and prompt parts: known from the suite's dimensions for
        a plan from :func:`expand`, else one pass over the items, kept."""
        known = self.items.survey if isinstance(self.items, LazyItems) else None
        return known if known is not None else survey(self.items)

    @functools.cached_property
    def _evaluators(self) -> tuple[Evaluator | None, ...]:
        """The evaluator of each of ``judges`` (None: it cannot be created, which
        :func:`check_plan` reports at its line)."""
        return tuple(_created(config) for config in self.judges)

    def _criteria_scorers(self) -> list[Evaluator]:
        """The evaluators of ``judges`` that score each answer's criteria."""
        return [e for e in self._evaluators if e is not None and e.scores_criteria]

    @property
    def criteria_judges(self) -> int:
        """How many evaluators score each answer's criteria (the criteria judges; a plan
        without ``judges``: its default judge)."""
        if not self.judges:
            return 1
        return len(self._criteria_scorers())

    @property
    def judge_calls(self) -> int:
        """The calls the evaluators that score criteria plan, before parse retries: per
        criteria judge, one per criterion per answer, or one per answer with criteria in
        ``all_criteria`` mode."""
        if not self.judges:  # the default judge: one call per criterion
            return sum(len(item.criteria) for item in self.items)
        return sum(
            planned.calls
            for evaluator in self._criteria_scorers()
            for item in self.items
            if item.kind in evaluator.kinds
            for planned in evaluator.planned_calls([item])
        )

    def default_judge(self) -> EvaluatorConfig:
        """The judge a plan without ``judges`` scores its criteria with (a suite's
        default evaluator type, on the plan's judge model)."""
        from qualspec.spec import EvaluatorConfig

        return EvaluatorConfig(model=self.judge_model)

    def run_evaluators(self, *, judge: bool = True) -> tuple[EvaluatorConfig, ...]:
        """The evaluators a run of this plan creates, in order.

        With ``judge``, the suite's judges (one that scores criteria only when some answer
        has criteria: checks alone need no judge, so none is called, calibrated or
        checked); then, whenever some scenario has ``expect:`` checks, also under
        ``--no-judge`` (checks are not a judge), the evaluator of checks, once.
        """
        from qualspec.spec import EvaluatorConfig

        if not self.items:
            return ()
        out: list[EvaluatorConfig] = []
        if judge:
            scored = any_item(self.items, "criteria", lambda item: bool(item.criteria))
            out = [
                config
                for config, evaluator in zip(self.judges, self._evaluators, strict=True)
                if scored or evaluator is None or not evaluator.scores_criteria
            ]
        checks = EvaluatorConfig.for_checks()
        has_checks = any_item(self.items, "checks", lambda item: bool(item.checks))
        if has_checks and all(c.label != checks.label for c in out):
            out.append(checks)
        return tuple(out)

    def with_judge(self, model: str | None = None, threshold: float | None = None) -> Plan:
        """The plan with every judge's model and/or threshold replaced (``--judge``).

        The new values are checked as the suite's own are, before anything is called.

        Raises:
            ConfigError: A model address that is not ``provider/model``, or a threshold
                that is not a number from 0 to 10.
        """
        from qualspec.engine._checks import check_threshold

        changes: dict[str, Any] = {}
        if model is not None:
            split_model(model)  # a malformed address: one line saying how to write it
            changes["model"] = model
            changes["panel"] = None  # one judge instead of a panel
        if threshold is not None:
            threshold = changes["threshold"] = check_threshold(threshold)
        if not changes:
            return self
        return dataclasses.replace(
            self,
            judge_model=model if model is not None else self.judge_model,
            threshold=threshold if threshold is not None else self.threshold,
            judges=tuple(j.model_copy(update=changes) for j in self.judges),
        )

    @property
    def reference_calls(self) -> int:
        """Work items of kind ``reference`` (reference answers)."""
        return sum(1 for item in self.items if item.kind == "reference")

    def with_references(
        self,
        model: str,
        *,
        scenarios: Sequence[str] | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> Plan:
        """The plan with a reference answer for every prompt its candidates are asked.

        One work item of kind ``reference`` per input and agent prompt version (each
        distinct scenario, input row and messages), asked of ``model``
        (``provider/model``) at temperature 0 with ``params``. Every candidate cell sent
        those messages depends on it: an evaluator that uses dependencies (a field
        grader) gets the reference in ``Subject.dependencies`` once it is answered, and a
        failed reference makes its evaluations errors that resume does again. Reference
        items are answered like candidates (limits, cache with the ``reference`` TTL,
        cost, budget, retries, resume) and stored as responses of kind ``reference``;
        each comes right before the first candidate of its scenario and input row that
        it answers, so it is asked first (and the plan stays a stream).

        Args:
            model: The reference model, ``provider/model``.
            scenarios: Only the cells of these scenarios (default: all).
            params: Call parameters of the reference calls (``max_tokens``, ...).

        Raises:
            ConfigError: A bad model address or an unknown scenario.

        Example::

            plan = expand(suite).with_references("openai/gpt-4o")
            print(plan.reference_calls, "reference answers")
        """
        address = split_model(model)
        chosen = set(select("scenario", "scenarios", scenarios, list(self.scenarios)))
        extra = {k: v for k, v in (params or {}).items() if k != "temperature"}
        base = self.items
        facts = base if isinstance(base, LazyItems) else None
        known = facts.survey if facts is not None else None
        if known is not None and chosen and base:  # a candidate of ``chosen`` is asked
            known = dataclasses.replace(known, others=(*known.others, "/".join(address)))
            known = dataclasses.replace(known, others=tuple(dict.fromkeys(known.others)))
        items = LazyItems(
            lambda: with_reference_items(base, address, chosen, extra),
            criteria=facts.criteria if facts is not None else None,
            checks=facts.checks if facts is not None else None,
            survey=known,
            input_order=facts.input_order if facts is not None else None,
        )
        return dataclasses.replace(self, items=items)

    def estimated_tokens(self) -> tuple[int, int]:
        """Estimated (input, output) tokens of the candidate and judge calls.

        About 4 characters a token; a call's output is its ``max_tokens`` parameter or 256.
        """
        judge_out = self.judge_max_tokens or _DEFAULT_OUTPUT_TOKENS
        tokens_in = tokens_out = 0
        for item in self.items:
            prompt_chars = sum(len(m.content) for m in item.messages)
            answer = int(item.params.get("max_tokens") or _DEFAULT_OUTPUT_TOKENS)
            tokens_in += prompt_chars // _CHARS_PER_TOKEN
            tokens_out += answer
            per_judge = (
                prompt_chars + len(item.context or "") + _JUDGE_TEMPLATE_CHARS
            ) // _CHARS_PER_TOKEN + answer
            for criterion in item.criteria:
                tokens_in += (per_judge + len(criterion) // _CHARS_PER_TOKEN) * self.criteria_judges
                tokens_out += judge_out * self.criteria_judges
        return tokens_in, tokens_out


def _unused_at_temperature(
    scenarios: Mapping[str, Scenario], chosen: Sequence[str], temps: tuple[float | None, ...]
) -> Iterator[str]:
    """A warning per ``at_temperature`` entry whose temperature the run does not use: its
    criterion is never judged."""
    used = ", ".join("none sent" if t is None else f"{t:g}" for t in temps)
    for name in chosen:
        for entry in scenarios[name].at_temperature:
            if entry.temperature not in temps:
                yield (
                    f"scenario '{name}': at_temperature {entry.temperature:g} is not one of "
                    f"the run's temperatures ({used}); its criterion "
                    f"'{entry.criterion}' is never judged"
                )


def _kept(suite: LoadedSuite, chosen: list[Scenario], count: int) -> bool:
    """Whether a plan's items are built once and kept: a small plan whose rows are all in
    memory (an inputs file is read row by row on every walk, as it may be large)."""
    from qualspec.spec import StreamedRows

    streamed = (isinstance(suite.inputs.get(s.name), StreamedRows) for s in chosen)
    return count <= _KEPT_ITEMS and not any(streamed)


def expand(
    suite: LoadedSuite,
    *,
    candidates: Sequence[str] | None = None,
    roles: Sequence[str] | None = None,
    scenarios: Sequence[str] | None = None,
    temperatures: Sequence[float] | str | None = None,
    runs: int | None = None,
    model: str | None = None,
) -> Plan:
    """Expand a suite into work items.

    Args:
        suite: The loaded suite.
        candidates: Only these candidates (names; ``None`` or empty: all).
        roles: Only these roles.
        scenarios: Only these scenarios.
        temperatures: Override the suite's temperatures (numbers, or text for
            :func:`parse_temperatures`). A suite without ``temperatures:`` sends none
            (``None``: the provider's default).
        runs: Override ``runs_per_temperature``.
        model: Replace every candidate's model address (run the suite on another server).

    Raises:
        ConfigError: An unknown name, a bad temperature, run count or model address.

    Example::

        plan = expand(load_suite("suite.yaml"), roles=["expert"], temperatures="0,0.7")
        print(len(plan.items), plan.judge_calls)
    """
    evaluation = suite.evaluation
    by_candidate = {c.name: c for c in evaluation.candidates}
    by_role = {r.name: r for r in evaluation.roles}
    by_scenario = {s.name: s for s in evaluation.scenarios}
    chosen_candidates = select("candidate", "--candidates", candidates, list(by_candidate))
    chosen_roles = select("role", "--roles", roles, list(by_role))
    chosen_scenarios = select("scenario", "--scenarios", scenarios, list(by_scenario))
    temps = run_temperatures(evaluation.temperature_values(), temperatures)
    n_runs = evaluation.runs_per_temperature if runs is None else runs
    if n_runs < 1:
        raise ConfigError(f"--runs must be at least 1, got {n_runs}")
    addresses = {
        name: split_model(model if model is not None else by_candidate[name].model)
        for name in chosen_candidates
    }
    role_list: list[Role | None] = [by_role[n] for n in chosen_roles] or [None]
    chosen = [by_scenario[name] for name in chosen_scenarios]
    cells = [(by_candidate[name], addresses[name]) for name in chosen_candidates]
    for candidate, _ in cells:
        check_seed(candidate, n_runs)  # now, not when the stream reaches its cells
    n_inputs = sum(len(scenario_rows(suite, scenario)) for scenario in chosen)
    items = _matrix_items(suite, chosen, role_list, cells, temps, n_runs)

    judges = tuple(evaluation.evaluator_configs())
    judge, judge_max = judges[0], judges[0].params.get("max_tokens")
    plan = Plan(
        items=items,
        candidates=tuple(chosen_candidates),
        roles=tuple(chosen_roles),
        scenarios=tuple(chosen_scenarios),
        temperatures=temps,
        runs=n_runs,
        judge_model=judge.main_model,
        threshold=judge.threshold,
        n_inputs=n_inputs,
        judge_max_tokens=int(judge_max) if isinstance(judge_max, int | float) else None,
        judges=judges,
        warnings=tuple(_unused_at_temperature(by_scenario, chosen_scenarios, temps)),
        input_rows=sum(len(suite.inputs.get(s.name, ())) for s in chosen),
    )
    return _with_references(suite, plan, chosen, role_list, cells)


def _matrix_items(
    suite: LoadedSuite,
    chosen: list[Scenario],
    roles: list[Role | None],
    cells: list[tuple[Candidate, tuple[str, str]]],
    temps: tuple[float | None, ...],
    runs: int,
) -> LazyItems:
    """The matrix's items, produced on demand, with what a run needs to know of them
    counted from the dimensions (nothing expanded)."""
    per_row = len(roles) * len(cells) * len(temps) * runs
    count = per_row * sum(len(scenario_rows(suite, scenario)) for scenario in chosen)
    found = matrix_survey(chosen, roles, cells, []) if count else PlanSurvey((), (), frozenset())
    return LazyItems(
        lambda: matrix(suite, chosen, roles, cells, temps, runs),
        count=count,
        criteria=per_row > 0 and any(criteria_at(suite, s, t) for s in chosen for t in temps),
        checks=per_row > 0 and any(s.expect for s in chosen),
        keep=_kept(suite, chosen, count),
        survey=found,
        input_order=functools.partial(_input_order, suite, chosen if per_row else []),
    )


def _with_references(
    suite: LoadedSuite,
    plan: Plan,
    chosen: list[Scenario],
    roles: list[Role | None],
    cells: list[tuple[Candidate, tuple[str, str]]],
) -> Plan:
    """``plan`` with the reference answers of the scenarios graded against one, counted
    from the suite's dimensions (nothing expanded)."""
    references, cells_count = 0, len(plan.items)  # known: the matrix's dimensions
    for scenario in chosen:
        reference = scenario.reference
        if reference is not None:
            plan = plan.with_references(
                reference.model, scenarios=[scenario.name], params=reference.params
            )
            rows = len(scenario_rows(suite, scenario))
            references += rows * prompts_per_row(scenario, roles, cells)
    lazy = plan.items
    if references and isinstance(lazy, LazyItems):
        count = cells_count + references
        counted = LazyItems(
            lazy.produce,
            count=count,
            criteria=lazy.criteria,
            checks=lazy.checks,
            survey=lazy.survey,
            input_order=lazy.input_order,
        )
        plan = dataclasses.replace(plan, items=counted)
    return plan


def _input_order(suite: LoadedSuite, scenarios: list[Scenario]) -> dict[str, list[str]]:
    """The input ids of each of ``scenarios`` with inputs, in file order (what a walk of
    the plan finds, read from the rows alone)."""
    from qualspec.spec import StreamedRows

    def ids(rows: Sequence[InputRow]) -> list[str]:
        known = rows.ids if isinstance(rows, StreamedRows) else None  # kept by the scan
        return list(known) if known is not None else [row.id for row in rows]

    return {s.name: ids(suite.inputs[s.name]) for s in scenarios if suite.inputs.get(s.name)}


def _created(config: EvaluatorConfig) -> Evaluator | None:
    from qualspec.engine._evaluators import create_evaluator

    try:
        return create_evaluator(config)
    except ConfigError:  # an unknown type, bad options: check_plan says so, at its line
        return None
