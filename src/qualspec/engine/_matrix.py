"""The matrix of a suite, cell by cell: expansion order is scenario -> input row -> role
-> candidate -> temperature -> run, produced one item at a time (an inputs file is read
row by row). The prompt sent is the role's preamble, a blank line, and the scenario prompt
rendered with the input row; the system prompt is the first set of role > scenario >
candidate.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from qualspec.engine._items import CallKeys, WorkItem, cell_key, messages_json
from qualspec.engine._plan_check import PlanSurvey
from qualspec.errors import ConfigError
from qualspec.providers import Message

if TYPE_CHECKING:
    from qualspec.spec import Candidate, InputRow, LoadedSuite, Role, Scenario

__all__ = [
    "check_seed",
    "criteria_at",
    "matrix",
    "matrix_survey",
    "prompts_per_row",
    "scenario_rows",
]


def criteria_at(
    suite: LoadedSuite, scenario: Scenario, temperature: float | None
) -> tuple[str, ...]:
    """The criteria of ``scenario``'s cells at ``temperature``: its own, its rubric's and
    its ``at_temperature`` ones, in order, de-duplicated."""
    from qualspec.spec import BUILTIN_RUBRICS

    out = list(scenario.criteria)
    if scenario.rubric:
        rubrics = {**BUILTIN_RUBRICS, **{r.name: r for r in suite.evaluation.rubrics}}
        out.extend(rubrics[scenario.rubric].criteria)
    # at_temperature criteria apply at a named temperature: never when none is sent
    out.extend(a.criterion for a in scenario.at_temperature if a.temperature == temperature)
    return tuple(dict.fromkeys(out))


def prompts_per_row(
    scenario: Scenario,
    roles: list[Role | None],
    candidates: list[tuple[Candidate, tuple[str, str]]],
) -> int:
    """How many distinct messages one input row of ``scenario`` is sent (its reference
    answers): one per system prompt and preamble its roles and candidates make."""
    return len(
        {
            (_system(role, scenario, candidate)[1], role.preamble or "" if role else "")
            for role in roles
            for candidate, _ in candidates
        }
    )


def _system(role: Role | None, scenario: Scenario, candidate: Candidate) -> tuple[str, str | None]:
    """The system prompt sent (role > scenario > candidate) and the name it is versioned
    under (``("", None)``: none)."""
    sources = (
        (f"system_prompt:role:{role.name if role else ''}", role.system_prompt if role else None),
        (f"system_prompt:scenario:{scenario.name}", scenario.system_prompt),
        (f"system_prompt:candidate:{candidate.name}", candidate.system_prompt),
    )
    return next(((n, s) for n, s in sources if s is not None), ("", None))


def _prompt_parts(scenario: Scenario, role: Role | None, candidate: Candidate) -> dict[str, str]:
    """The texts whose versions a cell's answers record, by source name. Prompt versions
    are tracked per named source: editing one scenario's prompt bumps that scenario's
    version only. The system prompt follows role > scenario > candidate."""
    system_name, system = _system(role, scenario, candidate)
    parts: dict[str, str] = {}
    if system is not None:
        parts[system_name] = system
    if role and role.preamble:
        parts[f"preamble:{role.name}"] = role.preamble
    parts[f"scenario_prompt:{scenario.name}"] = scenario.prompt
    return parts


def matrix_survey(
    scenarios: list[Scenario],
    roles: list[Role | None],
    candidates: list[tuple[Candidate, tuple[str, str]]],
    references: list[str],
) -> PlanSurvey:
    """What :func:`survey` finds in the items of :func:`matrix` (with the reference
    answers of models ``references``, as ``Plan.with_references`` places them), from the
    dimensions alone: nothing expanded, no inputs file read. ``scenarios``, ``roles`` and
    ``candidates`` are those of a matrix with at least one cell."""
    parts = {
        part
        for scenario in scenarios
        for role in roles
        for candidate, _ in candidates
        for part in _prompt_parts(scenario, role, candidate).items()
    }
    return PlanSurvey(
        others=tuple(dict.fromkeys(references)),
        candidates=tuple(dict.fromkeys((c.name, "/".join(a)) for c, a in candidates)),
        prompt_parts=frozenset(parts),
    )


def check_seed(candidate: Candidate, runs: int) -> None:
    """Refuse a seed that cannot move on by the run index (several runs)."""
    seed = candidate.params.get("seed")
    if runs > 1 and seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise ConfigError(
            f"candidate '{candidate.name}': params.seed must be a whole number with several "
            f"runs (it is sent as seed + run index, so the runs differ); got {seed!r}"
        )


def scenario_rows(suite: LoadedSuite, scenario: Scenario) -> Sequence[InputRow | None]:
    """A scenario's input rows (one ``None`` for a scenario without inputs); an inputs
    file's are read row by row each time they are iterated."""
    return suite.inputs.get(scenario.name) or [None]


def matrix(
    suite: LoadedSuite,
    scenarios: list[Scenario],
    roles: list[Role | None],
    candidates: list[tuple[Candidate, tuple[str, str]]],
    temperatures: tuple[float | None, ...],
    runs: int,
) -> Iterator[WorkItem]:
    """The candidate cells in expansion order: scenario -> input row -> role -> candidate
    (with its ``(provider, model)``) -> temperature -> run. What a cell's row does not
    change is made once per scenario, role and candidate."""
    from qualspec.spec import render_prompt

    for scenario in scenarios:
        criteria = {t: criteria_at(suite, scenario, t) for t in temperatures}
        cells = [
            _Cell.of(scenario, role, candidate, address, temperatures, runs)
            for role in roles
            for candidate, address in candidates
        ]
        for row in scenario_rows(suite, scenario):
            prompt = render_prompt(scenario.prompt, row.values) if row else scenario.prompt
            values = dict(row.values) if row else None
            for cell in cells:
                yield from cell.items(row, values, prompt, criteria)


def _run_params(params: dict[str, Any], run_index: int) -> dict[str, Any]:
    """A candidate's parameters for one run index: an integer ``seed`` moves on by the run
    index (``seed + run_index``), so repeated runs sample differently (the same seed on
    every run would make them identical and stability read as perfect); the seed sent is
    part of the call's cache key. Run 0, and every run without a seed, is unchanged."""
    seed = params.get("seed")
    if run_index == 0 or not isinstance(seed, int) or isinstance(seed, bool):
        return params
    return {**params, "seed": seed + run_index}


@dataclass(frozen=True)
class _Cell:
    """What the cells of one scenario, role and candidate share, whatever the row."""

    scenario: Scenario
    role: Role | None
    candidate: Candidate
    provider: str
    model: str
    system: Message | None
    preamble: str | None
    parts: dict[str, str]
    params: dict[str, Any]
    schema: dict[str, Any] | None
    checks: tuple[tuple[str, Any], ...]
    # per temperature and run: (temperature, run index, parameters sent, their call keys)
    calls: tuple[tuple[float | None, int, dict[str, Any], CallKeys], ...]

    @classmethod
    def of(
        cls,
        scenario: Scenario,
        role: Role | None,
        candidate: Candidate,
        address: tuple[str, str],
        temperatures: tuple[float | None, ...],
        runs: int,
    ) -> _Cell:
        system = _system(role, scenario, candidate)[1]
        preamble = role.preamble if role and role.preamble else None
        parts = _prompt_parts(scenario, role, candidate)
        params = {k: v for k, v in candidate.params.items() if k != "temperature"}
        schema = scenario.output_schema.to_json_schema() if scenario.output_schema else None
        calls = []
        for temperature in temperatures:
            for run_index in range(runs):
                run_params = _run_params(params, run_index)
                key_params = {**run_params, "temperature": temperature}
                keys = CallKeys(address[0], address[1], key_params, run_index, schema)
                calls.append((temperature, run_index, run_params, keys))
        return cls(
            scenario,
            role,
            candidate,
            address[0],
            address[1],
            Message("system", system) if system is not None else None,
            preamble,
            parts,
            params,
            schema,
            tuple((c.name, c.value) for c in scenario.expect),
            tuple(calls),
        )

    def items(
        self,
        row: InputRow | None,
        values: dict[str, Any] | None,
        prompt: str,
        criteria: dict[float | None, tuple[str, ...]],
    ) -> Iterator[WorkItem]:
        """The cells of ``row`` (its rendered ``prompt``), by temperature and run."""
        user = Message("user", f"{self.preamble}\n\n{prompt}" if self.preamble else prompt)
        messages = (self.system, user) if self.system is not None else (user,)
        sent = messages_json(messages)  # once per row: every temperature and run shares it
        scenario, role, name = self.scenario, self.role, self.candidate.name
        role_name = role.name if role else None
        input_id = row.id if row else None
        for temperature, run_index, run_params, keys in self.calls:
            call = keys.key(sent)
            yield WorkItem(
                key=cell_key(call, name, role, scenario.name, row),
                call_key=call,
                candidate=name,
                role=role_name,
                scenario=scenario.name,
                input_id=input_id,
                temperature=temperature,
                run_index=run_index,
                provider=self.provider,
                model=self.model,
                messages=messages,
                params=run_params,
                criteria=criteria[temperature],
                context=scenario.context,
                prompt_parts=self.parts,
                input_values=values,
                checks=self.checks,
                json_schema=self.schema,
            )
