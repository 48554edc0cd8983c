"""The safe YAML reader: plain data, positions, duplicate keys, no object construction."""

from __future__ import annotations

from pathlib import Path

import pytest

from qualspec.errors import SpecError
from qualspec.spec import load_suite
from qualspec.spec._yaml import parse_yaml

SOURCE = """\
name: demo
candidates:
  - name: smol
    model: local/smollm2
temperatures: [0, 0.7]
when: 2024-01-02
flag: yes
empty:
"""


def test_positions_are_one_based_for_values_and_keys() -> None:
    data, positions, issues = parse_yaml(SOURCE, "s.yaml")
    assert issues == []
    assert positions.find(("name",)) == (1, 7)
    assert positions.find(("candidates", 0)) == (3, 5)
    assert positions.find(("candidates", 0, "model")) == (4, 12)
    assert positions.find(("candidates", 0, "model"), key=True) == (4, 5)
    assert positions.find(("temperatures", 1)) == (5, 19)
    # an unknown path falls back to its nearest known ancestor
    assert positions.find(("candidates", 0, "nope", 3)) == (3, 5)
    assert positions.find(()) == (1, 1)


def test_scalars_become_plain_data_and_dates_stay_text() -> None:
    data, _, _ = parse_yaml(SOURCE, "s.yaml")
    assert data == {
        "name": "demo",
        "candidates": [{"name": "smol", "model": "local/smollm2"}],
        "temperatures": [0, 0.7],
        "when": "2024-01-02",
        "flag": True,
        "empty": None,
    }


def test_duplicate_keys_are_an_error() -> None:
    _, _, issues = parse_yaml("a: 1\nb: 2\na: 3\n", "d.yaml")
    assert [str(i) for i in issues] == [
        "d.yaml:3:1: error: a: duplicate key 'a' (first at line 1); keep only one"
    ]


def test_merge_keys_are_expanded_with_explicit_keys_winning() -> None:
    text = "base: &b {model: local/smollm2, name: x}\nc:\n  <<: *b\n  name: y\n"
    data, _, issues = parse_yaml(text, "m.yaml")
    assert issues == []
    assert data["c"] == {"model": "local/smollm2", "name": "y"}


def test_empty_document_is_none() -> None:
    assert parse_yaml("# only a comment\n", "e.yaml")[0] is None


def test_python_tags_are_rejected_and_never_executed(tmp_path: Path) -> None:
    marker = tmp_path / "executed"
    suite = tmp_path / "evil.yaml"
    suite.write_text(
        "name: evil\n"
        f"description: !!python/object/apply:os.system ['touch {marker}']\n"
        "candidates: [{name: smol, model: local/smollm2}]\n"
        "scenarios: [{name: s, prompt: Hi., criteria: [x]}]\n"
    )
    with pytest.raises(SpecError) as caught:
        load_suite(suite)
    assert not marker.exists()
    (issue,) = caught.value.issues
    assert (issue.line, issue.col, issue.field) == (2, 14, "description")
    assert "unsupported YAML tag '!!python/object/apply:os.system'" in issue.message


@pytest.mark.parametrize(
    "text",
    [
        "a: !!python/name:os.system ''\n",
        "a: !!python/object:collections.OrderedDict {}\n",
        "a: !custom 3\n",
        "a: !!set {x}\n",
    ],
)
def test_other_unsafe_or_unknown_tags_are_issues(text: str) -> None:
    _, _, issues = parse_yaml(text, "t.yaml")
    assert len(issues) == 1
    assert issues[0].line == 1 and issues[0].field == "a"
    assert "unsupported YAML tag" in issues[0].message


def test_syntax_error_has_line_and_column() -> None:
    _, _, issues = parse_yaml("a: [1, 2\nb: 3\n", "x.yaml")
    (issue,) = issues
    assert issue.path == "x.yaml" and issue.line == 2
    assert issue.message.startswith("invalid YAML: ")


def test_several_documents_are_an_error() -> None:
    _, _, issues = parse_yaml("a: 1\n---\nb: 2\n", "x.yaml")
    (issue,) = issues
    assert issue.line == 2
    assert "single document" in issue.message
