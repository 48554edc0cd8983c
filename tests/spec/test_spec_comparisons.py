"""``comparisons:`` in a suite: valid forms, the evaluators they become, and one-line errors
at file:line:col for bad entries (YAML and Python)."""

from __future__ import annotations

from pathlib import Path

import pytest

from qualspec import Candidate, Comparison, Evaluation, Role, Scenario
from qualspec.errors import SpecError
from qualspec.spec import load_suite

HEAD = """\
name: compare
candidates:
  - {name: a, model: openai/m1}
  - {name: b, model: openai/m2}
roles:
  - {name: novice, preamble: "New."}
  - {name: expert, preamble: "Old."}
scenarios:
  - {name: s, prompt: "Why?", criteria: [explains]}
judge: {model: openai/judge, structured_output: json_object}
comparisons:
"""


def _suite(tmp_path: Path, entries: str, head: str = HEAD) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(head + entries)
    return path


def _errors(path: Path) -> list[str]:
    with pytest.raises(SpecError) as exc:
        load_suite(path)
    lines = [str(issue) for issue in exc.value.issues]
    assert all("\n" not in line for line in lines)
    return lines


def test_entries_load_and_become_comparative_evaluators(tmp_path: Path) -> None:
    path = _suite(
        tmp_path,
        """\
  - {compare: candidates, within: roles}
  - compare: roles
    name: suppression
    model: openai/strong
    criteria: [discloses the evidence]
    debias: true
""",
    )
    evaluation = load_suite(path).evaluation
    first, second = evaluation.comparisons
    assert (first.label, first.held, first.debias) == (
        "compare_candidates_within_roles",
        "roles",
        False,
    )
    assert (second.label, second.held) == ("suppression", "candidates")
    configs = evaluation.evaluator_configs()
    assert [c.type for c in configs] == ["criteria", "comparative", "comparative"]
    assert configs[1].model == "openai/judge"  # the suite's judge model by default
    assert configs[1].structured_output == "json_object"
    assert configs[1].options == {"compare": "candidates", "within": "roles", "debias": False}
    assert configs[2].model == "openai/strong"
    assert configs[2].options["criteria"] == ["discloses the evidence"]
    assert configs[2].options["debias"] is True


@pytest.mark.parametrize(
    ("entry", "where", "message"),
    [
        (
            "  - {compare: roles, within: roles}\n",
            ":12:5: error: comparisons[0]:",
            "compare and within are both 'roles'",
        ),
        (
            "  - {compare: models, within: roles}\n",
            ":12:15: error: comparisons[0].compare:",
            "'candidates' or 'roles'",
        ),
        (
            "  - {compare: candidates, within: temperatures}\n",
            ":12:35: error: comparisons[0].within:",
            "'candidates' or 'roles'",
        ),
        (
            "  - {compare: candidates, againts: roles}\n",
            ":12:27: error: comparisons[0].againts:",
            "unknown field",
        ),
        (
            "  - {within: roles}\n",
            ":12:5: error: comparisons[0].compare:",
            "required field is missing",
        ),
        (
            "  - {compare: candidates}\n  - {compare: candidates, within: roles}\n",
            ":13:5: error: comparisons[1]:",
            "the name 'compare_candidates_within_roles' is taken",
        ),
        (
            "  - {compare: candidates, name: criteria}\n",
            ":12:33: error: comparisons[0].name:",
            "the name 'criteria' is taken",
        ),
        (
            "  - {compare: roles, model: gpt-4o}\n",
            ":12:29: error: comparisons[0].model:",
            "needs a provider prefix",
        ),
    ],
)
def test_bad_entries_are_one_line_errors_at_their_line(
    tmp_path: Path, entry: str, where: str, message: str
) -> None:
    path = _suite(tmp_path, entry)
    lines = _errors(path)
    assert any(where in line and message in line for line in lines), lines
    assert all(line.startswith(f"{path}:") for line in lines)


def test_comparing_roles_needs_two_roles(tmp_path: Path) -> None:
    head = HEAD.replace('  - {name: expert, preamble: "Old."}\n', "")
    path = _suite(tmp_path, "  - {compare: roles, within: candidates}\n", head=head)
    (line,) = _errors(path)
    assert f"{path}:11:15: error: comparisons[0].compare: comparing roles needs at least two" in (
        line
    )


def test_python_models_directly() -> None:
    comparison = Comparison(compare="roles")
    assert comparison.label == "compare_roles_within_candidates" and comparison.held == (
        "candidates"
    )
    with pytest.raises(ValueError, match="compare and within are both 'candidates'"):
        Comparison(compare="candidates", within="candidates")
    evaluation = Evaluation(
        name="e",
        candidates=[Candidate(name="a", model="openai/x"), Candidate(name="b", model="openai/y")],
        roles=[Role(name="r")],
        scenarios=[Scenario(name="s", prompt="p", criteria=["c"])],
        comparisons=[Comparison(compare="candidates", within="roles", debias=True)],
    )
    assert evaluation.evaluator_configs()[-1].model == "local/smollm2"


def test_python_suite_errors_point_at_the_entry(tmp_path: Path) -> None:
    path = tmp_path / "suite.py"
    path.write_text(
        "from qualspec import Candidate, Comparison, Evaluation, Scenario\n"
        "\n"
        "evaluation = Evaluation(\n"
        '    name="e",\n'
        '    candidates=[Candidate(name="a", model="openai/x")],\n'
        '    scenarios=[Scenario(name="s", prompt="p", criteria=["c"])],\n'
        "    comparisons=[\n"
        '        Comparison(compare="roles", within="roles"),\n'
        "    ],\n"
        ")\n"
    )
    lines = _errors(path)
    assert any(
        line.startswith(f"{path}:8:") and "compare and within are both 'roles'" in line
        for line in lines
    ), lines


def test_a_suite_with_comparisons_needs_no_criteria(tmp_path: Path) -> None:
    from qualspec.engine import expand
    from qualspec.spec import criteria_issues

    path = _suite(tmp_path, "  - {compare: candidates}\n")
    path.write_text(path.read_text().replace(", criteria: [explains]", ""))
    suite = load_suite(path)
    assert criteria_issues(suite.evaluation, ["s"], file=str(path)) == []
    plan = expand(suite)
    # no criteria: no criteria judge is created, the comparison is
    assert [c.type for c in plan.run_evaluators()] == ["comparative"]
