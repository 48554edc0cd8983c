"""Scenario inputs from lists, CSV, JSONL and YAML files, and prompt templates."""

from __future__ import annotations

from pathlib import Path

import pytest

from qualspec.errors import SpecError
from qualspec.spec import InputRow, load_suite, render_prompt
from qualspec.spec._inputs import read_inputs_file, template_problems

DATA = Path(__file__).parent / "data"

SUITE = """\
name: inputs
candidates: [{{name: smol, model: local/smollm2}}]
scenarios:
  - name: ask
    prompt: "Q: {{{{question}}}}"
    criteria: [Answers the question.]
    inputs: {inputs}
"""


def _suite(tmp_path: Path, inputs: str, files: dict[str, str] | None = None) -> Path:
    for name, text in (files or {}).items():
        (tmp_path / name).write_text(text)
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE.format(inputs=inputs))
    return path


def test_inputs_from_csv(tmp_path: Path) -> None:
    csv_text = 'id,question\nsky,"Why is the sky blue, really?"\nmath,What is 2+2?\n'
    suite = load_suite(_suite(tmp_path, "rows.csv", {"rows.csv": csv_text}))
    assert suite.inputs == {
        "ask": [
            InputRow("sky", {"id": "sky", "question": "Why is the sky blue, really?"}),
            InputRow("math", {"id": "math", "question": "What is 2+2?"}),
        ]
    }


def test_inputs_from_jsonl_number_rows_without_id() -> None:
    rows, issues = read_inputs_file(DATA / "rows.jsonl", "rows.jsonl")
    assert issues == []
    assert [(r.values, r.line) for r in rows] == [
        ({"id": "q1", "question": "Why is the sky blue?"}, 1),
        ({"question": "What is 2+2?", "level": 1}, 2),
    ]


def test_inputs_from_jsonl_and_yaml_files(tmp_path: Path) -> None:
    for name in ("rows.jsonl", "rows.yaml"):
        (tmp_path / name).write_text((DATA / name).read_text())
    for name, ids in (("rows.jsonl", ["q1", "2"]), ("rows.yaml", ["1", "last"])):
        suite = load_suite(_suite(tmp_path, name))
        assert [row.id for row in suite.inputs["ask"]] == ids
        assert suite.inputs["ask"][1].values["question"] == "What is 2+2?"


def test_inline_inputs_and_relative_path_from_another_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite_path = _suite(tmp_path, "[{question: a}, {question: b, id: 7}]")
    monkeypatch.chdir("/")
    suite = load_suite(suite_path)
    assert suite.inputs["ask"] == [
        InputRow("1", {"question": "a"}),
        InputRow("7", {"question": "b", "id": 7}),
    ]


def test_scenario_without_inputs_is_absent(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "name: x\ncandidates: [{name: a, model: local/m}]\n"
        "scenarios: [{name: s, prompt: Hi., criteria: [c]}]\n"
    )
    assert load_suite(path).inputs == {}


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("r.csv", "", "r.csv:1:1: error: empty CSV file; the first line names columns"),
        (
            "r.csv",
            "q,q\n1,2\n",
            "r.csv:1:1: error: the header has duplicate column 'q'; name columns uniquely",
        ),
        (
            "r.csv",
            'question\n\nfine\n"broken\n',
            "r.csv:4:1: error: invalid CSV: unexpected end of data",
        ),
        (
            "r.jsonl",
            '{"question": "a"}\n[1, 2]\n',
            'r.jsonl:2:1: error: each line must be a JSON object like {"id": "a", "name": "..."}',
        ),
        ("r.jsonl", "\n\n", "r.jsonl:1:1: error: no rows; write one JSON object per line"),
        (
            "r.yaml",
            "question: not a list\n",
            "r.yaml:1:1: error: an inputs YAML file must be a list of mappings "
            "(one '- key: value' per row)",
        ),
        (
            "r.yaml",
            "- question: a\n- just text\n",
            "r.yaml:2:3: error: [1]: each row must be a mapping",
        ),
        (
            "r.jsonl",
            '{"id": "a", "question": "x"}\n{"id": "a", "question": "y"}\n',
            "r.jsonl:2:1: error: duplicate input id 'a' (first at line 1); "
            "input ids must be unique",
        ),
        (
            "r.txt",
            "question\n",
            "r.txt:1:1: error: unsupported inputs file type; use .csv, .jsonl or .yaml",
        ),
    ],
)
def test_malformed_inputs_files_point_at_their_own_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str, expected: str
) -> None:
    _suite(tmp_path, name, {name: text})
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SpecError) as caught:
        load_suite("suite.yaml")
    assert str(caught.value) == expected


def test_csv_row_with_wrong_number_of_fields(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _suite(tmp_path, "r.csv", {"r.csv": "id,question\na,x\nb,y,z\nc\n"})
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SpecError) as caught:
        load_suite("suite.yaml")
    assert [(i.path, i.line) for i in caught.value.issues] == [("r.csv", 3), ("r.csv", 4)]
    assert "row has 3 value(s) but the header has 2 columns" in caught.value.issues[0].message


def test_render_prompt_with_optional_whitespace() -> None:
    values = {"a": "x", "n": 3, "b": None}
    assert render_prompt("{{a}} {{ n }} {{  b  }}!", values) == "x 3 !"


def test_template_problems() -> None:
    rows = [InputRow("1", {"a": 1}), InputRow("2", {"b": 2})]
    assert template_problems("no variables", []) == []
    assert template_problems("{{ a }}", rows) == [
        "template variable 'a' is missing from input row(s) 2; add a 'a' column/key to every row"
    ]
    assert template_problems("{{ a }}", []) == [
        "template variable 'a' has no value: the scenario has no inputs; add inputs: rows "
        "with that key, or remove the {{ }}"
    ]
    assert template_problems("{{ a-b }}", rows)[0].startswith("'{{ a-b }}' is not a template")


def test_render_prompt_splits_a_template_as_substitution_would() -> None:
    values = {"a": "{{ b }}", "b": "B", "n": 1.5, "d": {"k": [1, "é"]}}
    template = "{{a}}{{b}} x {{ n }}{{d}} {{ missing-dash }} {{b}}"
    assert render_prompt(template, values) == '{{ b }}B x 1.5{"k": [1, "é"]} {{ missing-dash }} B'
    assert render_prompt("", values) == ""
    with pytest.raises(KeyError):
        render_prompt("{{ nope }}", values)


def test_a_streamed_file_missing_a_variable_deep_in_it_is_still_reported(tmp_path: Path) -> None:
    """The scan keeps the keys every row has: a JSONL row without the variable (the keys
    differ by row) is found, as is a CSV whose header lacks it; a file of at most 10,000
    rows keeps its ids in order for the run's metadata."""
    lines = [f'{{"id": "r{i}", "question": "q{i}"}}' for i in range(3000)]
    lines[2500] = '{"id": "r2500", "other": "x"}'
    files = {"rows.jsonl": "\n".join(lines) + "\n", "rows.csv": "id,other\na,1\n"}
    for name, shown in (("rows.jsonl", "r2500"), ("rows.csv", "a")):
        with pytest.raises(SpecError) as caught:
            load_suite(_suite(tmp_path, name, files))
        assert f"'question' is missing from input row(s) {shown};" in str(caught.value)
    good = "id,question\n" + "".join(f"r{i},q{i}\n" for i in range(10_001))
    (tmp_path / "rows.csv").write_text(good)
    rows = load_suite(_suite(tmp_path, "rows.csv")).inputs["ask"]
    assert len(rows) == 10_001 and getattr(rows, "ids", ()) is None
    (tmp_path / "rows.csv").write_text(good[: good.index("r10000,")])
    rows = load_suite(_suite(tmp_path, "rows.csv")).inputs["ask"]
    assert getattr(rows, "ids", None) == tuple(f"r{i}" for i in range(10_000))
