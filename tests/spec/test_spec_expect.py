"""``expect:`` in a suite: valid forms, and one-line errors at file:line:col for bad entries."""

from __future__ import annotations

from pathlib import Path

import pytest

from qualspec.errors import SpecError
from qualspec.spec import CHECK_NAMES, ExpectCheck, Scenario, criteria_issues, load_suite

HEAD = """\
name: checks
candidates:
  - {name: bot, model: local/m}
scenarios:
  - name: capital
    prompt: "What is the capital of France?"
    expect:
"""


def _suite(tmp_path: Path, entries: str, tail: str = "") -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(HEAD + entries + tail)
    return path


def _error(path: Path) -> str:
    with pytest.raises(SpecError) as exc:
        load_suite(path)
    (issue,) = exc.value.issues  # one problem, one issue
    text = str(issue)
    assert "\n" not in text
    return text


def test_every_check_loads_in_suite_order_without_criteria(tmp_path: Path) -> None:
    path = _suite(
        tmp_path,
        """\
      - contains: Paris
      - not_contains: London
      - icontains: paris
      - regex: "\\\\bParis\\\\b"
      - equals: Paris
      - starts_with: The
      - max_words: 50
      - max_chars: 400
      - is_json: true
      - json_schema: {type: object, required: [city], properties: {city: {type: string}}}
      - refusal: false
""",
    )
    suite = load_suite(path)
    (scenario,) = suite.evaluation.scenarios
    assert [c.name for c in scenario.expect] == list(CHECK_NAMES)
    assert scenario.expect[3].value == r"\bParis\b"
    assert scenario.expect[6].value == 50
    # checks and no criteria: nothing for a judge to do, and that is not an error
    issues = criteria_issues(suite.evaluation, ["capital"], file=str(path))
    assert issues == []


def test_a_scenario_without_criteria_or_checks_is_still_reported(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(HEAD.replace("    expect:\n", ""))
    suite = load_suite(path)
    (issue,) = criteria_issues(suite.evaluation, ["capital"], file=str(path))
    assert "`expect:` checks" in str(issue)


def test_numbers_are_text_for_text_checks(tmp_path: Path) -> None:
    suite = load_suite(_suite(tmp_path, "      - equals: 42\n"))
    assert suite.evaluation.scenarios[0].expect[0].value == "42"


@pytest.mark.parametrize(
    ("entry", "where", "message"),
    [
        ("      - contain: Paris\n", "8:9", "contain: unknown field; did you mean 'contains'?"),
        ("      - regexp: x\n", "8:9", "did you mean 'regex'?"),
        ("      - max_word: 5\n", "8:9", "did you mean 'max_words'?"),
        ("      - {contains: Paris, max_words: 3}\n", "8:9", "give exactly one check per entry"),
        ("      - {}\n", "8:9", "give exactly one check per entry"),
        ("      - Paris\n", "8:9", "one `check: value` mapping (e.g. `- contains: Paris`)"),
        ("      - is_json\n", "8:9", "(e.g. `- is_json: true`)"),
        ("      - regex: '(['\n", "8:9", "regex '([' does not compile"),
        ("      - max_words: -1\n", "8:20", "expect[0].max_words: Input should be greater than"),
        ("      - max_chars: 0\n", "8:20", "expect[0].max_chars: Input should be greater than"),
        ("      - max_words: true\n", "8:20", "expect[0].max_words: Input should be a valid int"),
        ("      - max_words: many\n", "8:20", "expect[0].max_words"),
        ("      - contains: ''\n", "8:19", "expect[0].contains: String should have at least 1"),
        ("      - is_json: maybe\n", "8:18", "expect[0].is_json: Input should be a valid bool"),
        ("      - json_schema: 5\n", "8:22", "expect[0].json_schema: Input should be a valid dict"),
        (
            "      - json_schema: {type: objekt}\n",
            "8:9",
            "json_schema.type: unknown type 'objekt'; did you mean 'object'?",
        ),
        (
            "      - json_schema: {propertis: {a: {}}}\n",
            "8:9",
            "json_schema.propertis: unsupported keyword; did you mean 'properties'?",
        ),
        (
            "      - json_schema: {properties: {a: {type: strin}}}\n",
            "8:9",
            "json_schema.properties.a.type: unknown type 'strin'; did you mean 'string'?",
        ),
        ("      - json_schema: {oneOf: []}\n", "8:9", "json_schema.oneOf: unsupported keyword"),
        ("      - json_schema: {required: city}\n", "8:9", "json_schema.required: give a list"),
        ("      - json_schema: {minLength: -1}\n", "8:9", "json_schema.minLength: give a whole"),
        ("      - json_schema: {pattern: '(['}\n", "8:9", "json_schema.pattern: '([' does not"),
        (
            "      - json_schema: {additionalProperties: {type: string}}\n",
            "8:9",
            "json_schema.additionalProperties: only true or false is supported",
        ),
    ],
)
def test_a_bad_entry_is_one_line_at_its_place(
    tmp_path: Path, entry: str, where: str, message: str
) -> None:
    path = _suite(tmp_path, entry)
    text = _error(path)
    assert text.startswith(f"{path}:{where}: error: scenarios[0].expect[0]"), text
    assert message in text, text


def test_the_second_bad_entry_is_found_at_its_own_line(tmp_path: Path) -> None:
    path = _suite(tmp_path, "      - contains: Paris\n      - icontain: paris\n")
    text = _error(path)
    assert text.startswith(f"{path}:9:9: error: scenarios[0].expect[1].icontain:"), text
    assert "did you mean 'icontains'?" in text


def test_annotations_in_a_schema_are_allowed(tmp_path: Path) -> None:
    entry = (
        "      - json_schema: {$schema: x, title: T, description: d, type: [string, 'null'],"
        " maxLength: 3}\n"
    )
    suite = load_suite(_suite(tmp_path, entry))
    assert suite.evaluation.scenarios[0].expect[0].name == "json_schema"


@pytest.mark.parametrize(
    ("judges", "message"),
    [
        ("[{type: criteria, name: expect}]", "the name 'expect' belongs to the evaluator"),
        ("[{type: expect, name: mine}]", "is always named 'expect'"),
    ],
)
def test_the_name_expect_is_the_checks(tmp_path: Path, judges: str, message: str) -> None:
    path = _suite(tmp_path, "      - contains: Paris\n", f"judges: {judges}\n")
    text = _error(path)
    assert text.startswith(f"{path}:9:10: error: judges[0]"), text
    assert message in text


def test_judges_may_list_the_checks_evaluator(tmp_path: Path) -> None:
    suite = load_suite(_suite(tmp_path, "      - contains: Paris\n", "judges: [{type: expect}]\n"))
    assert [j.label for j in suite.evaluation.judges] == ["expect"]


def test_the_python_front_end_takes_checks(tmp_path: Path) -> None:
    path = tmp_path / "suite.py"
    path.write_text(
        "from qualspec.spec import Candidate, Evaluation, ExpectCheck, Scenario\n"
        "\n"
        "evaluation = Evaluation(\n"
        '    name="dsl",\n'
        '    candidates=[Candidate(name="bot", model="local/m")],\n'
        "    scenarios=[\n"
        "        Scenario(\n"
        '            name="capital",\n'
        '            prompt="Q?",\n'
        '            expect=[ExpectCheck(contains="Paris"), {"max_words": 5}],\n'
        "        ),\n"
        "    ],\n"
        ")\n"
    )
    (scenario,) = load_suite(path).evaluation.scenarios
    assert [(c.name, c.value) for c in scenario.expect] == [("contains", "Paris"), ("max_words", 5)]


def test_the_python_front_end_reports_a_bad_check_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "suite.py"
    path.write_text(
        "from qualspec.spec import Candidate, Evaluation, Scenario\n"
        "\n"
        "evaluation = Evaluation(\n"
        '    name="dsl",\n'
        '    candidates=[Candidate(name="bot", model="local/m")],\n'
        "    scenarios=[\n"
        "        Scenario(\n"
        '            name="capital",\n'
        '            prompt="Q?",\n'
        '            expect=[{"contain": "Paris"}],\n'
        "        ),\n"
        "    ],\n"
        ")\n"
    )
    text = _error(path)
    assert text.startswith(f"{path}:10:"), text
    assert "expect[0].contain: unknown field; did you mean 'contains'?" in text


def test_models_directly() -> None:
    assert ExpectCheck(refusal=False).name == "refusal"
    assert ExpectCheck(refusal=False).value is False
    scenario = Scenario(name="s", prompt="p", expect=[{"icontains": "x"}])  # type: ignore[list-item]
    assert scenario.expect[0].name == "icontains"
    with pytest.raises(ValueError, match="exactly one check"):
        ExpectCheck()
