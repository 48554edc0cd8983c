"""Semantic checks of a suite, on its plain data (so they run even when pydantic fails)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qualspec.errors import SpecIssue
from qualspec.spec._input_stream import STREAMED_KINDS, scan_inputs_file
from qualspec.spec._inputs import (
    InputRow,
    RawRow,
    read_inputs_file,
    rows_from_list,
    template_problems,
)
from qualspec.spec._issues import Locator, did_you_mean
from qualspec.spec._paths import FieldPath, FixedLocator, format_field
from qualspec.spec._presets import TEMPERATURE_PRESETS
from qualspec.spec._rubrics import BUILTIN_RUBRICS

if TYPE_CHECKING:
    from qualspec.spec._models import Evaluation

__all__ = ["check_suite", "criteria_issues"]

_MIN_TEMPERATURE = 0.0
_MAX_TEMPERATURE = 2.0


@dataclass
class _Checker:
    file: str
    locator: Locator
    base_dir: Path
    shown_dir: Path
    issues: list[SpecIssue] = field(default_factory=list)
    inputs: dict[str, Sequence[InputRow]] = field(default_factory=dict)
    providers: list[str] = field(default_factory=list)  # registered and suite-defined

    def add(self, path: FieldPath, message: str, *, key: bool = False) -> None:
        line, col = self.locator.find(path, key=key)
        self.issues.append(SpecIssue(self.file, line, col, format_field(path), message))


def _items(data: dict[str, Any], name: str) -> Iterator[tuple[int, dict[str, Any]]]:
    value = data.get(name)
    if isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, dict):
                yield i, item


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_suite(
    data: dict[str, Any], *, file: str, locator: Locator, base_dir: Path, shown_dir: Path
) -> tuple[list[SpecIssue], dict[str, Sequence[InputRow]]]:
    """Check what pydantic cannot, and resolve every scenario's inputs.

    Args:
        data: The suite as plain data (YAML as read, or a dumped Evaluation).
        file: The suite path printed in issues.
        locator: Finds field paths in the suite source.
        base_dir: The directory inputs file paths are relative to.
        shown_dir: The same directory as it should be printed.

    Returns:
        The issues found, and scenario name -> input rows for the scenarios with inputs.
    """
    checker = _Checker(file, locator, base_dir, shown_dir)
    checker.providers = _provider_names(data)
    for kind, section in (
        ("candidate", "candidates"),
        ("role", "roles"),
        ("scenario", "scenarios"),
        ("rubric", "rubrics"),
    ):
        _check_unique(checker, data, kind, section)
    for i, candidate in _items(data, "candidates"):
        _check_address(checker, ("candidates", i, "model"), candidate.get("model"))
        params = candidate.get("params")
        if isinstance(params, dict) and "temperature" in params:
            checker.add(
                ("candidates", i, "params", "temperature"),
                "temperature is not a candidate parameter; set the suite's temperatures: instead",
                key=True,
            )
    judge = data.get("judge")
    if isinstance(judge, str):
        _check_address(checker, ("judge",), judge)
    elif isinstance(judge, dict):
        _check_address(checker, ("judge", "model"), judge.get("model"))
    for i, entry in _items(data, "judges"):
        _check_address(checker, ("judges", i, "model"), entry.get("model"))
    taken = {"expect"} | {
        str(j.get("name") or j.get("type") or "criteria") for _, j in _items(data, "judges")
    }
    if not data.get("judges"):
        taken.add("criteria")
    for i, entry in _items(data, "comparisons"):
        _check_address(checker, ("comparisons", i, "model"), entry.get("model"))
        _check_comparison(checker, data, i, entry, taken)
    _check_temperatures(checker, data.get("temperatures"))
    rubric_names = [r.get("name") for _, r in _items(data, "rubrics")]
    known_rubrics = [*BUILTIN_RUBRICS, *(n for n in rubric_names if isinstance(n, str))]
    for i, scenario in _items(data, "scenarios"):
        _check_scenario(checker, i, scenario, known_rubrics)
    return checker.issues, checker.inputs


def _check_unique(checker: _Checker, data: dict[str, Any], kind: str, section: str) -> None:
    first: dict[str, int] = {}
    for i, item in _items(data, section):
        name = item.get("name")
        if not isinstance(name, str):
            continue
        if name in first:
            line, _ = checker.locator.find((section, first[name], "name"))
            checker.add(
                (section, i, "name"),
                f"duplicate {kind} name '{name}' (first at line {line}); names must be unique",
            )
        else:
            first[name] = i


def _check_address(checker: _Checker, path: FieldPath, address: Any) -> None:
    if not isinstance(address, str):
        return
    provider, sep, model = address.strip().partition("/")
    if not sep or not provider or not model:
        checker.add(
            path,
            f"model address '{address}' needs a provider prefix: write provider/model, "
            "e.g. local/smollm2 or openai/gpt-4o",
        )
    elif path[0] == "candidates" and provider not in checker.providers:
        # judges are checked with the plan (check_plan): --judge or --no-judge may apply
        hint = did_you_mean(provider, checker.providers) or ";"
        checker.add(
            path,
            f"unknown provider '{provider}'{hint} available: {', '.join(checker.providers)}; "
            "or define it under providers: (e.g. an OpenAI-compatible server)",
        )


def _check_comparison(
    checker: _Checker, data: dict[str, Any], i: int, entry: dict[str, Any], taken: set[str]
) -> None:
    """A comparison of candidates needs two candidates, of roles two roles, and a name of
    its own (``taken`` holds the names used so far)."""
    compare = entry.get("compare")
    if compare not in ("candidates", "roles"):
        return  # pydantic names the valid dimensions
    within = entry.get("within") or ("roles" if compare == "candidates" else "candidates")
    name = str(entry.get("name") or f"compare_{compare}_within_{within}")
    if name in taken:
        checker.add(
            ("comparisons", i, "name") if entry.get("name") else ("comparisons", i),
            f"the name '{name}' is taken (by a judge or an earlier comparison); give this "
            "comparison a unique name: (e.g. name: compare_again)",
        )
    taken.add(name)
    members = [m for _, m in _items(data, compare)]
    if len(members) < 2:
        kind = compare[:-1]
        checker.add(
            ("comparisons", i, "compare"),
            f"comparing {compare} needs at least two {compare}, the suite has "
            f"{len(members)}; add a {kind} under {compare}: or remove this comparison",
        )


def _provider_names(data: dict[str, Any]) -> list[str]:
    """The providers a suite can use: registered ones and those under its providers:."""
    from qualspec.providers import available_providers

    defined = data.get("providers")
    names = set(available_providers())
    if isinstance(defined, dict):
        names.update(name for name in defined if isinstance(name, str))
    return sorted(names)


def _check_range(checker: _Checker, path: FieldPath, value: Any) -> None:
    if _is_number(value) and not _MIN_TEMPERATURE <= value <= _MAX_TEMPERATURE:
        checker.add(
            path,
            f"temperature {value:g} is outside 0..2; use a value from 0 to 2 "
            "(providers with a smaller range clamp it)",
        )


def _check_temperatures(checker: _Checker, value: Any) -> None:
    if isinstance(value, str):
        if value not in TEMPERATURE_PRESETS:
            presets = ", ".join(TEMPERATURE_PRESETS)
            hint = did_you_mean(value, TEMPERATURE_PRESETS) or ";"
            checker.add(
                ("temperatures",),
                f"unknown temperature preset '{value}'{hint} presets are: {presets} "
                "(or give a list of numbers)",
            )
    elif isinstance(value, list):
        for i, temperature in enumerate(value):
            _check_range(checker, ("temperatures", i), temperature)
        if not value:
            checker.add(("temperatures",), "no temperatures; give at least one, e.g. [0.0]")


def _check_scenario(
    checker: _Checker, i: int, scenario: dict[str, Any], known_rubrics: list[str]
) -> None:
    path: FieldPath = ("scenarios", i)
    rubric = scenario.get("rubric")
    if isinstance(rubric, str) and rubric not in known_rubrics:
        suggestion = did_you_mean(rubric, known_rubrics)
        known = "" if suggestion else "; known rubrics: " + ", ".join(known_rubrics)
        checker.add((*path, "rubric"), f"unknown rubric '{rubric}'{suggestion}{known}")
    at_temperature = scenario.get("at_temperature")
    if isinstance(at_temperature, list):
        for j, entry in enumerate(at_temperature):
            if isinstance(entry, dict):
                value = entry.get("temperature")
                _check_range(checker, (*path, "at_temperature", j, "temperature"), value)
    # a scenario with nothing to judge is fine with --no-judge: see criteria_issues
    rows, ok = _resolve_inputs(checker, path, scenario.get("inputs"))
    name = scenario.get("name")
    if ok and rows and isinstance(name, str):
        checker.inputs[name] = rows
    prompt = scenario.get("prompt")
    if ok and isinstance(prompt, str):
        for problem in template_problems(prompt, rows):
            checker.add((*path, "prompt"), problem)


def _source_locator(file: str, source: Path | None) -> Locator:
    """A locator for a YAML suite read again (1:1 for anything else)."""
    if source is not None and source.suffix.lower() in (".yaml", ".yml"):
        try:
            from qualspec.spec._yaml import parse_yaml

            _data, positions, problems = parse_yaml(source.read_text(encoding="utf-8-sig"), file)
            if not problems:
                return positions
        except (OSError, UnicodeDecodeError):
            pass
    return FixedLocator()


def criteria_issues(
    evaluation: Evaluation,
    scenarios: Iterable[str],
    *,
    file: str,
    source: Path | None = None,
    locator: Locator | None = None,
) -> list[SpecIssue]:
    """Issues for the given scenarios that have nothing to judge (no criteria, rubric,
    temperature-specific criteria or checks, and the suite has no comparisons): an error
    when the run is judged, fine with --no-judge.

    Args:
        evaluation: The loaded suite.
        scenarios: The names of the scenarios the run includes.
        file: The suite path printed in issues.
        source: The YAML file, read again to give each issue its line and column (else
            issues are placed at 1:1), when no ``locator`` is given.
        locator: The loaded suite's locator (it also places scenarios included from
            behaviours).
    """
    wanted = set(scenarios)
    if evaluation.comparisons:  # answers compared side by side need no criteria of their own
        return []
    missing = [
        (i, s)
        for i, s in enumerate(evaluation.scenarios)
        if s.name in wanted
        and not s.criteria
        and not s.rubric
        and not s.at_temperature
        and not s.expect
        and s.reference is None  # graded field by field against its reference
    ]
    if not missing:
        return []
    if locator is None:
        locator = _source_locator(file, source)
    issues = []
    for i, scenario in missing:
        path: FieldPath = ("scenarios", i)
        line, col = locator.find(path)
        issues.append(
            SpecIssue(
                file,
                line,
                col,
                format_field(path),
                f"scenario '{scenario.name}' has no criteria to judge; add `criteria:` "
                "(statements scored 0-10), `rubric:` (e.g. helpfulness), `expect:` checks or "
                "`comparisons:`, or run with --no-judge",
            )
        )
    return issues


def _resolve_inputs(
    checker: _Checker, path: FieldPath, value: Any
) -> tuple[Sequence[InputRow], bool]:
    """The rows of a scenario's inputs, and whether they could all be read."""
    where = (*path, "inputs")
    rows: Sequence[InputRow] = []
    if value is None:
        return [], True
    if isinstance(value, list):
        if not all(isinstance(item, dict) for item in value):
            return [], False  # pydantic reports the bad rows
        raws = [RawRow(item, *checker.locator.find((*where, j))) for j, item in enumerate(value)]
        rows, issues = rows_from_list(
            raws, checker.file, format_field(where), checker.locator.find(where)
        )
    elif isinstance(value, str):
        relative = Path(value).expanduser()
        full = relative if relative.is_absolute() else checker.base_dir / relative
        shown = str(relative if relative.is_absolute() else checker.shown_dir / relative)
        if not full.is_file():
            checker.add(
                where,
                f"inputs file '{value}' not found (looked for {full}); "
                "paths are relative to the suite file",
            )
            return [], False
        try:
            if full.suffix.lower() in STREAMED_KINDS:  # read row by row, never whole
                streamed, issues = scan_inputs_file(full, shown)
                checker.issues.extend(issues)
                return (streamed if streamed is not None else []), not issues
            raws, issues = read_inputs_file(full, shown)
        except OSError as exc:
            checker.add(where, f"cannot read inputs file '{value}': {exc.strerror or exc}")
            return [], False
        if not issues:
            rows, issues = rows_from_list(raws, shown, "", (1, 1))
    else:
        return [], False  # pydantic reports the wrong type
    checker.issues.extend(issues)
    return (rows if not issues else []), not issues
