"""Results files are written by ``dumps_indented``: the text ``json.dumps(data, indent=2,
ensure_ascii=False, default=...)`` writes, character for character, errors included, except
that an array of objects has one object per line (as ``json.dumps(obj, ensure_ascii=False,
default=...)`` writes it), the layout of a large run's streamed results file."""

from __future__ import annotations

import datetime as dt
import enum
import json
import math
from pathlib import Path
from typing import Any

import pytest

from qualspec.report import write_json_atomic
from qualspec.report._atomic_files import _json_default
from qualspec.report._json_text import dumps_indented


class _Level(enum.IntEnum):
    HIGH = 3


class _Text(str):
    pass


class _Number(float):
    pass


VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -5,
    2**80,
    1.5,
    -0.0,
    1e300,
    math.nan,
    math.inf,
    -math.inf,
    'é "quoted" \\ \n \x00 \u2028 😀',
    [],
    {},
    [[]],
    [{}],
    {"a": [], "b": {}},
    (1, (2, 3)),
    {2: "int", 1.5: "float", True: "true", False: "false", None: "none", "s": "str"},
    {"nested": {"deeper": [1, {"x": [None, True, 2.5, "y"]}]}},
    {frozenset([1])},
    dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
    dt.date(2024, 1, 2),
    Path("some/where.json"),
    _Level.HIGH,
    {_Level.HIGH: _Level.HIGH},
    _Text("a str subclass"),
    _Number(2.5),
    [_Text("t"), _Number(1.0), _Level.HIGH],
]


@pytest.mark.parametrize("value", VALUES, ids=[repr(v)[:40] for v in VALUES])
def test_the_text_is_that_of_json_dumps(value: Any) -> None:
    expected = json.dumps(value, indent=2, ensure_ascii=False, default=_json_default)
    assert dumps_indented(value, _json_default) == expected


@pytest.mark.parametrize(
    "value", [{(1, 2): "tuple key"}, object(), {"a": [object()]}], ids=["key", "value", "inner"]
)
def test_what_cannot_be_written_fails_as_json_dumps_fails(value: Any) -> None:
    with pytest.raises(TypeError) as expected:
        json.dumps(value, indent=2, ensure_ascii=False, default=_json_default)
    with pytest.raises(TypeError) as got:
        dumps_indented(value, _json_default)
    assert str(got.value) == str(expected.value)


def test_a_container_that_contains_itself_is_refused() -> None:
    loop: list[Any] = []
    loop.append(loop)
    mapping: dict[str, Any] = {}
    mapping["self"] = [mapping]
    for value in (loop, mapping):
        with pytest.raises(ValueError, match="Circular reference detected"):
            dumps_indented(value, _json_default)


RECORDS: dict[str, Any] = {
    "responses": [
        {"key": "a", "text": "é", "judgments": [{"score": 9.5, "at": dt.date(2024, 1, 2)}]},
        {"key": "b", "text": None, "judgments": [], "tags": {"x": [1, 2]}},
    ],
    "mixed": [1, {"a": 1}],
    "empty": [{}],
}


def test_an_array_of_objects_has_one_object_per_line() -> None:
    assert dumps_indented(RECORDS, _json_default) == (
        "{\n"
        '  "responses": [\n'
        '    {"key": "a", "text": "é", "judgments": [{"score": 9.5, "at": "2024-01-02"}]},\n'
        '    {"key": "b", "text": null, "judgments": [], "tags": {"x": [1, 2]}}\n'
        "  ],\n"
        '  "mixed": [\n'
        "    1,\n"
        "    {\n"
        '      "a": 1\n'
        "    }\n"
        "  ],\n"
        '  "empty": [\n'
        "    {}\n"
        "  ]\n"
        "}"
    )


@pytest.mark.parametrize(
    "value", [*VALUES, RECORDS], ids=[repr(v)[:40] for v in [*VALUES, RECORDS]]
)
def test_the_data_read_back_is_that_of_json_dumps(value: Any) -> None:
    expected = json.dumps(value, ensure_ascii=False, default=_json_default)
    read_back = json.loads(dumps_indented(value, _json_default))
    assert json.dumps(read_back) == json.dumps(json.loads(expected))  # NaN != NaN


def test_a_results_file_is_the_text_and_a_newline(tmp_path: Path) -> None:
    data = {"schema_version": "1.0", "responses": [{"text": "é", "score": 9.5}], "n": None}
    path = tmp_path / "results.json"
    write_json_atomic(path, data)
    expected = (
        '{\n  "schema_version": "1.0",\n  "responses": [\n    {"text": "é", "score": 9.5}\n'
        '  ],\n  "n": null\n}\n'
    )
    assert path.read_text(encoding="utf-8") == expected
