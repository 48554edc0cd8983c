"""Broken suites: every problem is one ``path:line:col: error: field: message`` line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from qualspec.errors import SpecError
from qualspec.spec import load_suite

BAD = Path(__file__).parent / "data" / "bad"

_NO_CRITERIA = (
    "has no criteria to judge; add `criteria:` (statements scored 0-10), "
    "`rubric:` (e.g. helpfulness), `expect:` checks or `comparisons:`"
)
_PREFIX = "needs a provider prefix: write provider/model, e.g. local/smollm2 or openai/gpt-4o"
_RANGE = "is outside 0..2; use a value from 0 to 2 (providers with a smaller range clamp it)"
_PRESETS = "presets are: stability_test, full_range, safety_probe (or give a list of numbers)"

EXPECTED: dict[str, list[str]] = {
    "syntax_error.yaml": [
        "syntax_error.yaml:5:3: error: invalid YAML: expected <block end>, but found '?'",
    ],
    "misspelled_key.yaml": [
        "misspelled_key.yaml:7:5: error: scenarios[0].promt: unknown field; did you mean 'prompt'?",
    ],
    "unknown_rubric.yaml": [
        "unknown_rubric.yaml:7:13: error: scenarios[0].rubric: unknown rubric "
        "'evidence_completness'; did you mean 'evidence_completeness'?",
    ],
    "unknown_preset.yaml": [
        "unknown_preset.yaml:6:15: error: temperatures: unknown temperature preset "
        f"'stabilty_test'; did you mean 'stability_test'? {_PRESETS}",
    ],
    "duplicate_names.yaml": [
        "duplicate_names.yaml:6:12: error: roles[1].name: duplicate role name 'expert' "
        "(first at line 5); names must be unique",
    ],
    "temperature_range.yaml": [
        "temperature_range.yaml:9:23: error: scenarios[0].at_temperature[0].temperature: "
        f"temperature 2.5 {_RANGE}",
        f"temperature_range.yaml:10:26: error: temperatures[2]: temperature -1 {_RANGE}",
    ],
    "template_variable.yaml": [
        "template_variable.yaml:6:13: error: scenarios[0].prompt: '{{ 1 }}.' is not a "
        "template variable; write {{ name }}",
        "template_variable.yaml:6:13: error: scenarios[0].prompt: template variable 'level' "
        "is missing from input row(s) 2; add a 'level' column/key to every row",
    ],
    "unknown_aggregation.yaml": [
        "unknown_aggregation.yaml:6:14: error: aggregation: Input should be "
        "'mean_with_variance', 'mean' or 'majority'",
    ],
    "no_provider.yaml": [
        f"no_provider.yaml:4:12: error: candidates[0].model: model address 'gpt-4o' {_PREFIX}",
    ],
    "bad_inputs_file.yaml": [
        "broken_rows.jsonl:2:29: error: invalid JSON: "
        "Expecting property name enclosed in double quotes",
    ],
    "missing_inputs_file.yaml": [
        "missing_inputs_file.yaml:8:13: error: scenarios[0].inputs: inputs file "
        "'nowhere.csv' not found (looked for {dir}/nowhere.csv); "
        "paths are relative to the suite file",
    ],
    "python_tag.yaml": [
        "python_tag.yaml:2:13: error: candidates: unsupported YAML tag "
        "'!!python/object/apply:os.system': qualspec reads YAML safely and never "
        "constructs objects; remove the tag",
    ],
    "top_level_list.yaml": [
        "top_level_list.yaml:1:1: error: the top level is a list; a suite is a mapping of "
        "fields (name:, candidates:, scenarios:, ...)",
    ],
    "empty.yaml": [
        "empty.yaml:1:1: error: the file is empty; a suite needs at least name:, "
        "candidates: and scenarios:",
    ],
    "duplicate_key.yaml": [
        "duplicate_key.yaml:7:5: error: scenarios[0].prompt: duplicate key 'prompt' "
        "(first at line 6); keep only one",
    ],
    "missing_field.yaml": [
        "missing_field.yaml:5:5: error: scenarios[0].prompt: required field is missing; "
        "add prompt: to it",
    ],
    "wrong_type.yaml": [
        "wrong_type.yaml:6:23: error: runs_per_temperature: Input should be a valid integer, "
        "unable to parse string as an integer",
        "wrong_type.yaml:9:14: error: judge.threshold: Input should be less than or equal to 10",
    ],
    "many_problems.yaml": [
        f"many_problems.yaml:4:12: error: candidates[0].model: model address 'smollm2' {_PREFIX}",
        "many_problems.yaml:5:30: error: candidates[0].params.temperature: temperature is not "
        "a candidate parameter; set the suite's temperatures: instead",
        "many_problems.yaml:8:5: error: roles[0].preambel: unknown field; did you mean 'preamble'?",
        "many_problems.yaml:12:13: error: scenarios[0].rubric: unknown rubric 'helpfullness'; "
        "did you mean 'helpfulness'?",
        "many_problems.yaml:13:11: error: scenarios[1].name: duplicate scenario name 'one' "
        "(first at line 10); names must be unique",
        f"many_problems.yaml:15:21: error: temperatures[1]: temperature 9 {_RANGE}",
    ],
    "suite.txt": [
        "suite.txt:1:1: error: unsupported suite file type '.txt'; use .yaml or .py",
    ],
    "syntax_error.py": [
        "syntax_error.py:7:1: error: SyntaxError: closing parenthesis ')' does not match "
        "opening parenthesis '[' on line 5",
    ],
    "validation_error.py": [
        "validation_error.py:7:32: error: Scenario.promt: unknown field; did you mean 'prompt'?",
    ],
    "nested_validation_error.py": [
        "nested_validation_error.py:8:37: error: scenarios[1].criteria: "
        "Input should be a valid list",
        "nested_validation_error.py:10:26: error: runs_per_temperature: "
        "Input should be greater than or equal to 1",
    ],
    "name_error.py": [
        "name_error.py:7:16: error: NameError: name 'Scenaro' is not defined; "
        "did you mean 'Scenario'?",
    ],
    "no_evaluation.py": [
        "no_evaluation.py:1:1: error: no Evaluation defined at module level; "
        "assign one: evaluation = Evaluation(...)",
    ],
    "two_evaluations.py": [
        "two_evaluations.py:1:1: error: several Evaluation objects (first, second); "
        "name the one to run 'evaluation'",
    ],
    "runtime_error.py": [
        "runtime_error.py:7:42: error: KeyError: 'modle'",
    ],
    "semantic.py": [
        "semantic.py:5:63: error: scenarios[1].rubric: unknown rubric "
        "'evidence_completness'; did you mean 'evidence_completeness'?",
        f"semantic.py:10:45: error: candidates[0].model: model address 'gpt-4o' {_PREFIX}",
        "semantic.py:11:38: error: roles[1].name: duplicate role name 'a' (first at line 11); "
        "names must be unique",
        f"semantic.py:13:18: error: temperatures: unknown temperature preset 'hot'; {_PRESETS}",
    ],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_suite_reports_each_problem_on_one_line(
    name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(BAD)
    broken = BAD / f"{name}.broken"
    if broken.exists():  # kept unparsable for linters too; run it under its real name
        shutil.copy(broken, tmp_path / name)
        monkeypatch.chdir(tmp_path)
    with pytest.raises(SpecError) as caught:
        load_suite(name)
    expected = [line.replace("{dir}", str(BAD)) for line in EXPECTED[name]]
    assert str(caught.value).splitlines() == expected
    assert [str(issue) for issue in caught.value.issues] == expected


def test_there_are_at_least_twelve_bad_suites() -> None:
    assert len(EXPECTED) >= 12
    assert sum(n.endswith(".py") for n in EXPECTED) >= 5
    on_disk = {
        p.name.removesuffix(".broken")
        for p in BAD.iterdir()
        if p.suffix in (".yaml", ".py", ".txt", ".broken")
    }
    assert set(EXPECTED) == on_disk


def test_nothing_to_judge_is_an_error_only_for_a_judged_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # loading accepts it (--no-judge needs no criteria); a judged run asks criteria_issues
    from qualspec.spec import criteria_issues

    monkeypatch.chdir(BAD.parent)
    suite = load_suite("no_criteria.yaml")
    issues = criteria_issues(
        suite.evaluation, ["judged", "unjudged"], file="no_criteria.yaml", source=suite.path
    )
    assert [str(i) for i in issues] == [
        f"no_criteria.yaml:8:5: error: scenarios[1]: scenario 'unjudged' {_NO_CRITERIA}, "
        "or run with --no-judge"
    ]
    assert criteria_issues(suite.evaluation, ["judged"], file="x", source=suite.path) == []


def test_issue_carries_path_line_col_and_field(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(BAD)
    with pytest.raises(SpecError) as caught:
        load_suite("misspelled_key.yaml")
    (issue,) = caught.value.issues
    assert (issue.path, issue.line, issue.col) == ("misspelled_key.yaml", 7, 5)
    assert issue.field == "scenarios[0].promt"


def test_issue_path_is_printed_as_given(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "s.yaml"
    path.parent.mkdir()
    path.write_text("name: x\ncandidates: []\nscenarios: []\n")
    with pytest.raises(SpecError) as caught:
        load_suite(path)
    lines = str(caught.value).splitlines()
    assert lines == [
        f"{path}:2:13: error: candidates: List should have at least 1 item after validation, not 0",
        f"{path}:3:12: error: scenarios: List should have at least 1 item after validation, not 0",
    ]


def test_missing_suite_file(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=r"nope\.yaml:1:1: error: file not found"):
        load_suite(tmp_path / "nope.yaml")
