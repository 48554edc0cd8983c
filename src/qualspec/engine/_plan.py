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

from qualspec.engine._items import WorkItem, call_key, cell_key, reference_key
from qualspec.engine._plan_check import check_plan
from qualspec.engine._selection import parse_temperatures, run_temperatures, select, split_model
from qualspec.errors import ConfigError
from qualspec.providers import Message

if TYPE_CHECKING:
    from qualspec.engine._evaluators import Evaluator
    from qualspec.spec import Candidate, EvaluatorConfig, InputRow, LoadedSuite, Role, Scenario

__all__ = ["Plan", "check_plan", "expand", "parse_temperatures"]

_CHARS_PER_TOKEN = 4
_DEFAULT_OUTPUT_TOKENS = 256
_JUDGE_TEMPLATE_CHARS = 900  # the judge instructions around prompt, answer and criterion


@dataclass(frozen=True)
class Plan:
    """Every call of a run, in expansion order, and the dimensions it came from.

    ``items`` are the candidate cells, and the items of other kinds they depend on
    (reference answers, added by :meth:`with_references`) ahead of them.
    ``roles`` is empty when the suite has none; ``n_inputs`` counts input rows over the
    selected scenarios (1 for a scenario without inputs).
    """

    items: list[WorkItem]
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
            scored = any(item.criteria for item in self.items)
            out = [
                config
                for config, evaluator in zip(self.judges, self._evaluators, strict=True)
                if scored or evaluator is None or not evaluator.scores_criteria
            ]
        checks = EvaluatorConfig.for_checks()
        if any(item.checks for item in self.items) and all(c.label != checks.label for c in out):
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
        they come first in ``items``, so they are asked first.

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
        provider, model_name = split_model(model)
        chosen = set(select("scenario", "scenarios", scenarios, list(self.scenarios)))
        extra = {k: v for k, v in (params or {}).items() if k != "temperature"}
        refs: dict[str, WorkItem] = {}
        items: list[WorkItem] = []
        for item in self.items:
            if item.kind != "candidate" or item.scenario not in chosen:
                items.append(item)
                continue
            ref_params = {**extra, "temperature": 0.0}
            call = call_key(provider, model_name, item.messages, ref_params, 0, item.json_schema)
            key = reference_key(call, item.scenario, item.input_id)
            if key not in refs:
                refs[key] = WorkItem(
                    key=key,
                    call_key=call,
                    candidate="reference",
                    role=item.role,
                    scenario=item.scenario,
                    input_id=item.input_id,
                    temperature=0.0,
                    run_index=0,
                    provider=provider,
                    model=model_name,
                    messages=item.messages,
                    params=extra,
                    criteria=(),
                    context=item.context,
                    prompt_parts=item.prompt_parts,
                    input_values=item.input_values,
                    kind="reference",
                    json_schema=item.json_schema,
                )
            if key not in item.depends_on:
                item = dataclasses.replace(item, depends_on=(*item.depends_on, key))
            items.append(item)
        known = {item.key for item in items}
        return dataclasses.replace(
            self, items=[*(r for k, r in refs.items() if k not in known), *items]
        )

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


def _criteria(suite: LoadedSuite, scenario: Scenario, temperature: float | None) -> tuple[str, ...]:
    from qualspec.spec import BUILTIN_RUBRICS

    out = list(scenario.criteria)
    if scenario.rubric:
        rubrics = {**BUILTIN_RUBRICS, **{r.name: r for r in suite.evaluation.rubrics}}
        out.extend(rubrics[scenario.rubric].criteria)
    # at_temperature criteria apply at a named temperature: never when none is sent
    out.extend(a.criterion for a in scenario.at_temperature if a.temperature == temperature)
    return tuple(dict.fromkeys(out))


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
    items = list(_matrix(suite, chosen, role_list, cells, temps, n_runs))
    n_inputs = sum(len(_rows(suite, scenario)) for scenario in chosen)
    from qualspec.spec import DEFAULT_JUDGE_MODEL

    judges = tuple(evaluation.evaluator_configs())
    judge = judges[0]
    judge_max = judge.params.get("max_tokens")
    plan = Plan(
        items=items,
        candidates=tuple(chosen_candidates),
        roles=tuple(chosen_roles),
        scenarios=tuple(chosen_scenarios),
        temperatures=temps,
        runs=n_runs,
        judge_model=judge.model or DEFAULT_JUDGE_MODEL,
        threshold=judge.threshold,
        n_inputs=n_inputs,
        judge_max_tokens=int(judge_max) if isinstance(judge_max, int | float) else None,
        judges=judges,
        warnings=tuple(_unused_at_temperature(by_scenario, chosen_scenarios, temps)),
    )
    for name in chosen_scenarios:  # reference answers of the scenarios graded against one
        reference = by_scenario[name].reference
        if reference is not None:
            plan = plan.with_references(reference.model, scenarios=[name], params=reference.params)
    return plan


def _rows(suite: LoadedSuite, scenario: Scenario) -> list[InputRow | None]:
    """A scenario's input rows (one ``None`` for a scenario without inputs)."""
    return list(suite.inputs.get(scenario.name, [])) or [None]


def _matrix(
    suite: LoadedSuite,
    scenarios: list[Scenario],
    roles: list[Role | None],
    candidates: list[tuple[Candidate, tuple[str, str]]],
    temperatures: tuple[float | None, ...],
    runs: int,
) -> Iterator[WorkItem]:
    """The candidate cells in expansion order: scenario -> input row -> role -> candidate
    (with its ``(provider, model)``) -> temperature -> run."""
    for scenario in scenarios:
        criteria = {t: _criteria(suite, scenario, t) for t in temperatures}
        for row in _rows(suite, scenario):
            prompt = _render(scenario.prompt, row)
            for role in roles:
                for candidate, address in candidates:
                    yield from _cells(
                        scenario, row, role, candidate, address, prompt, temperatures, runs,
                        criteria,
                    )  # fmt: skip


def _created(config: EvaluatorConfig) -> Evaluator | None:
    from qualspec.engine._evaluators import create_evaluator

    try:
        return create_evaluator(config)
    except ConfigError:  # an unknown type, bad options: check_plan says so, at its line
        return None


def _render(template: str, row: InputRow | None) -> str:
    if row is None:
        return template
    from qualspec.spec import render_prompt

    return render_prompt(template, row.values)


def _run_params(params: dict[str, Any], run_index: int) -> dict[str, Any]:
    """A candidate's parameters for one run index: an integer ``seed`` moves on by the run
    index (``seed + run_index``), so repeated runs sample differently (the same seed on
    every run would make them identical and stability read as perfect); the seed sent is
    part of the call's cache key. Run 0, and every run without a seed, is unchanged."""
    seed = params.get("seed")
    if run_index == 0 or not isinstance(seed, int) or isinstance(seed, bool):
        return params
    return {**params, "seed": seed + run_index}


def _cells(
    scenario: Scenario,
    row: InputRow | None,
    role: Role | None,
    candidate: Candidate,
    address: tuple[str, str],
    prompt: str,
    temperatures: tuple[float | None, ...],
    runs: int,
    criteria: dict[float | None, tuple[str, ...]],
) -> list[WorkItem]:
    # Prompt versions are tracked per named source: editing one scenario's prompt bumps
    # that scenario's version only. The system prompt follows role > scenario > candidate.
    sources = (
        (f"system_prompt:role:{role.name if role else ''}", role.system_prompt if role else None),
        (f"system_prompt:scenario:{scenario.name}", scenario.system_prompt),
        (f"system_prompt:candidate:{candidate.name}", candidate.system_prompt),
    )
    system_name, system = next(((n, s) for n, s in sources if s is not None), ("", None))
    user = f"{role.preamble}\n\n{prompt}" if role and role.preamble else prompt
    messages = (Message("system", system),) if system is not None else ()
    messages = (*messages, Message("user", user))
    parts: dict[str, str] = {}
    if system is not None:
        parts[system_name] = system
    if role and role.preamble:
        parts[f"preamble:{role.name}"] = role.preamble
    parts[f"scenario_prompt:{scenario.name}"] = scenario.prompt
    params: dict[str, Any] = {k: v for k, v in candidate.params.items() if k != "temperature"}
    seed = params.get("seed")
    if runs > 1 and seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise ConfigError(
            f"candidate '{candidate.name}': params.seed must be a whole number with several "
            f"runs (it is sent as seed + run index, so the runs differ); got {seed!r}"
        )
    provider, model = address
    schema = scenario.output_schema.to_json_schema() if scenario.output_schema else None
    out: list[WorkItem] = []
    values = dict(row.values) if row else None  # one object: the store encodes it once
    for temperature in temperatures:
        for run_index in range(runs):
            run_params = _run_params(params, run_index)
            key_params = {**run_params, "temperature": temperature}
            call = call_key(provider, model, messages, key_params, run_index, schema)
            out.append(
                WorkItem(
                    key=cell_key(call, candidate.name, role, scenario.name, row),
                    call_key=call,
                    candidate=candidate.name,
                    role=role.name if role else None,
                    scenario=scenario.name,
                    input_id=row.id if row else None,
                    temperature=temperature,
                    run_index=run_index,
                    provider=provider,
                    model=model,
                    messages=messages,
                    params=run_params,
                    criteria=criteria[temperature],
                    context=scenario.context,
                    prompt_parts=parts,
                    input_values=values,
                    checks=tuple((c.name, c.value) for c in scenario.expect),
                    json_schema=schema,
                )
            )
    return out
