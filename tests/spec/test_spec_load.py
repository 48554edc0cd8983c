"""load_suite / load_evaluation / json_schema and the built-in rubrics."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

import qualspec.spec as spec
from qualspec.errors import SpecError
from qualspec.spec import (
    BUILTIN_RUBRICS,
    Candidate,
    Evaluation,
    LoadedSuite,
    Rubric,
    Scenario,
    json_schema,
    load_evaluation,
    load_suite,
)

DATA = Path(__file__).parent / "data"


def test_public_names_are_sorted_and_exported() -> None:
    assert spec.__all__ == sorted(spec.__all__)
    for name in spec.__all__:
        assert hasattr(spec, name)


def test_spec_package_import_is_light() -> None:
    import subprocess

    code = (
        "import sys, qualspec.spec; "
        "print(sorted(m for m in ('yaml', 'sqlalchemy', 'aiohttp', 'llama_cpp', 'rich') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_load_yaml_suite() -> None:
    suite = load_suite(DATA / "same.yaml")
    assert isinstance(suite, LoadedSuite)
    assert suite.path == (DATA / "same.yaml").resolve()
    assert suite.base_dir == DATA.resolve()
    assert suite.content_hash == hashlib.sha256((DATA / "same.yaml").read_bytes()).hexdigest()
    assert suite.evaluation.temperature_values() == (0.0, 0.5, 1.0)
    assert suite.evaluation.judge.threshold == 6
    assert [row.id for row in suite.inputs["explain"]] == ["bridges", "tides"]
    assert "capital" not in suite.inputs


def test_python_and_yaml_give_the_same_evaluation() -> None:
    from_yaml = load_suite(DATA / "same.yaml")
    from_python = load_suite(DATA / "same.py")
    assert from_python.evaluation == from_yaml.evaluation
    assert from_python.inputs == from_yaml.inputs
    assert from_python.content_hash != from_yaml.content_hash


def test_python_suite_module_is_not_left_behind(tmp_path: Path) -> None:
    before = set(sys.modules)
    path_before = list(sys.path)
    load_suite(DATA / "same.py")
    assert {m for m in set(sys.modules) - before if m.startswith("_qualspec_suite")} == set()
    assert sys.path == path_before


def test_python_suite_can_import_a_sibling_module(tmp_path: Path) -> None:
    (tmp_path / "shared_bits.py").write_text(
        "from qualspec.spec import Candidate\nCANDIDATES = [Candidate(name='a', model='local/m')]\n"
    )
    (tmp_path / "suite.py").write_text(
        "from qualspec.spec import Evaluation, Scenario\n"
        "from shared_bits import CANDIDATES\n"
        "evaluation = Evaluation(name='x', candidates=CANDIDATES,\n"
        "    scenarios=[Scenario(name='s', prompt='Hi.', criteria=['c'])])\n"
    )
    try:
        assert load_suite(tmp_path / "suite.py").evaluation.candidates[0].name == "a"
    finally:
        sys.modules.pop("shared_bits", None)


def test_python_suite_with_several_evaluations_uses_the_one_named_evaluation(
    tmp_path: Path,
) -> None:
    (tmp_path / "suite.py").write_text(
        "from qualspec.spec import Candidate, Evaluation, Scenario\n"
        "base = Evaluation(name='base', candidates=[Candidate(name='a', model='local/m')],\n"
        "    scenarios=[Scenario(name='s', prompt='Hi.', criteria=['c'])])\n"
        "alias = base\n"
        "evaluation = base.model_copy(update={'name': 'chosen'})\n"
    )
    assert load_suite(tmp_path / "suite.py").evaluation.name == "chosen"


def test_semantic_issue_in_python_points_at_the_evaluation_call(tmp_path: Path) -> None:
    (tmp_path / "suite.py").write_text(
        "from qualspec.spec import Candidate, Evaluation, Scenario\n"
        "def make():\n"
        "    return Evaluation(name='x', candidates=[Candidate(name='a', model='local/m')],\n"
        "        scenarios=[Scenario(name='s', prompt='Hi.', rubric='nosuch')])\n"
        "\n"
        "evaluation = make()\n"
    )
    with pytest.raises(SpecError) as caught:
        load_suite(tmp_path / "suite.py")
    (issue,) = caught.value.issues
    assert (issue.line, issue.col, issue.field) == (6, 14, "scenarios[0].rubric")


def test_load_evaluation_built_in_code(tmp_path: Path) -> None:
    (tmp_path / "rows.csv").write_text("q\nfirst\nsecond\n")
    evaluation = Evaluation(
        name="code",
        candidates=[Candidate(name="a", model="local/m")],
        scenarios=[Scenario(name="s", prompt="{{ q }}", criteria=["c"], inputs="rows.csv")],
    )
    suite = load_evaluation(evaluation, tmp_path)
    assert suite.path == Path("<evaluation>")
    assert suite.base_dir == tmp_path.resolve()
    assert [row.id for row in suite.inputs["s"]] == ["1", "2"]
    expected = hashlib.sha256(evaluation.model_dump_json().encode()).hexdigest()
    assert suite.content_hash == expected


def test_load_evaluation_reports_semantic_issues() -> None:
    evaluation = Evaluation(
        name="code",
        candidates=[Candidate(name="a", model="m")],
        scenarios=[Scenario(name="s", prompt="Hi.", rubric="helpfulnes")],
    )
    with pytest.raises(SpecError) as caught:
        load_evaluation(evaluation, ".")
    assert [str(i) for i in caught.value.issues] == [
        "<evaluation>:1:1: error: candidates[0].model: model address 'm' needs a provider "
        "prefix: write provider/model, e.g. local/smollm2 or openai/gpt-4o",
        "<evaluation>:1:1: error: scenarios[0].rubric: unknown rubric 'helpfulnes'; "
        "did you mean 'helpfulness'?",
    ]


def test_suite_rubrics_are_known_by_name(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "name: x\ncandidates: [{name: a, model: local/m}]\n"
        "rubrics: [{name: mine, criteria: [Is mine.]}]\n"
        "scenarios: [{name: s, prompt: Hi., rubric: mine}]\n"
    )
    assert load_suite(path).evaluation.scenarios[0].rubric == "mine"


def test_judge_shorthand_and_union_errors(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "name: x\njudge: openai/gpt-4o\ncandidates: [{name: a, model: local/m}]\n"
        "scenarios: [{name: s, prompt: Hi., criteria: [c], inputs: {a: 1}}]\n"
        "temperatures: {a: 1}\n"
    )
    with pytest.raises(SpecError) as caught:
        load_suite(path)
    assert [(i.line, i.field, i.message) for i in caught.value.issues] == [
        (
            4,
            "scenarios[0].inputs",
            "expected a list of rows (mappings) or a path to a .csv, .jsonl or .yaml file",
        ),
        (
            5,
            "temperatures",
            "expected a list of numbers (e.g. [0.0, 0.7]) or a preset name "
            "(stability_test, full_range, safety_probe)",
        ),
    ]


def test_builtin_rubrics() -> None:
    required = {
        "helpfulness",
        "safety",
        "evidence_completeness",
        "code_quality",
        "concise",
        "in_character",
        "tool_calling",
    }
    assert required <= set(BUILTIN_RUBRICS)
    for name, rubric in BUILTIN_RUBRICS.items():
        assert rubric.name == name
        # built without validation (no validator built at import): each one validates
        assert Rubric.model_validate(rubric.model_dump()) == rubric
        assert 3 <= len(rubric.criteria) <= 5
        assert len(set(rubric.criteria)) == len(rubric.criteria)
        # statements about the answer that a judge can score 0-10
        for criterion in rubric.criteria:
            assert criterion.endswith(".")
            assert "response" in criterion or "code" in criterion


def test_json_schema() -> None:
    schema = json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] == "qualspec suite"
    assert {"name", "candidates", "scenarios"} <= set(schema["required"])
    assert schema["properties"]["temperatures"]["anyOf"][1]["enum"] == [
        "stability_test",
        "full_range",
        "safety_probe",
    ]
    assert {
        "type": "string",
        "description": schema["properties"]["judge"]["anyOf"][0]["description"],
    } == schema["properties"]["judge"]["anyOf"][0]
    assert "Scenario" in schema["$defs"]
    assert schema["$defs"]["Scenario"]["additionalProperties"] is False
    json.dumps(schema)  # serialisable


def test_forgotten_import_is_named(tmp_path: Path) -> None:
    (tmp_path / "suite.py").write_text(
        "from qualspec.spec import Candidate, Evaluation\n"
        "evaluation = Evaluation(name='x', candidates=[Candidate(name='a', model='local/m')],\n"
        "    scenarios=[Scenario(name='s', prompt='Hi.', criteria=['c'])])\n"
    )
    with pytest.raises(SpecError) as caught:
        load_suite(tmp_path / "suite.py")
    assert [str(i) for i in caught.value.issues] == [
        f"{tmp_path / 'suite.py'}:3:16: error: NameError: name 'Scenario' is not defined; "
        "import it: from qualspec.spec import Scenario"
    ]


def test_misspelt_top_level_keys_suggest_the_field(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "name: x\ncandidate:\n  - {name: a, model: local/m}\n"
        "scenarios:\n  - {name: s, prompt: p, criterion: [x], rubric: concise}\n"
        "runs: 3\n"
    )
    with pytest.raises(SpecError) as caught:
        load_suite(path)
    assert [(i.line, i.col, i.field, i.message) for i in caught.value.issues] == [
        (2, 1, "candidate", "unknown field; did you mean 'candidates'?"),
        (5, 26, "scenarios[0].criterion", "unknown field; did you mean 'criteria'?"),
        (6, 1, "runs", "unknown field; did you mean 'runs_per_temperature'?"),
    ]


def test_the_ruby_gems_rubric_names_are_built_in(tmp_path: Path) -> None:
    for name in ("tool_calling_strict", "grounded", "empathetic", "follows_instructions"):
        assert name in BUILTIN_RUBRICS
    assert BUILTIN_RUBRICS["helpful"].criteria == BUILTIN_RUBRICS["helpfulness"].criteria
    suite = tmp_path / "ported.yaml"
    suite.write_text(
        "name: ported\ncandidates: [{name: c, model: local/smollm2}]\n"
        "scenarios:\n  - {name: a, prompt: hi, rubric: helpful}\n"
        "  - {name: b, prompt: hi, rubric: grounded}\n",
        encoding="utf-8",
    )
    loaded = load_suite(suite)
    assert [s.rubric for s in loaded.evaluation.scenarios] == ["helpful", "grounded"]
