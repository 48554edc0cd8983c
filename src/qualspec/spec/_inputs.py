"""Scenario inputs (a list of rows or a CSV/JSONL/YAML file) and ``{{ variable }}`` prompts."""

from __future__ import annotations

import csv
import functools
import io
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence, Sized
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qualspec.errors import SpecIssue

__all__ = [
    "InputRow",
    "RawRow",
    "csv_rows",
    "jsonl_rows",
    "read_inputs_file",
    "render_prompt",
    "row_id_of",
    "rows_from_list",
    "template_problems",
]

_VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_FILE_KINDS = {
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".yaml": "yaml",
    ".yml": "yaml",
}


@dataclass(frozen=True)
class InputRow:
    """One row of a scenario's inputs.

    ``id`` is the row's ``id`` column/key when present, else its 1-based row number.
    ``values`` are the row's variables (``id`` included), used to render the prompt.
    """

    id: str
    values: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RawRow:
    """A row before checking, with where it came from (for issues)."""

    values: Mapping[Any, Any]
    line: int
    col: int


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def render_prompt(template: str, values: Mapping[str, Any]) -> str:
    """Replace each ``{{ name }}`` (whitespace optional) with the row's value."""
    literals, names = _pieces(template)
    if not names:
        return template
    out = [literals[0]]
    for name, literal in zip(names, literals[1:], strict=True):
        out.append(_text(values[name]))
        out.append(literal)
    return "".join(out)


@functools.lru_cache(maxsize=256)
def _pieces(template: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A template's text around its variables, and their names (split once, rendered
    for every row)."""
    parts = _VARIABLE.split(template)  # literal, name, literal, ..., name, literal
    return tuple(parts[0::2]), tuple(parts[1::2])


def template_problems(template: str, rows: Iterable[InputRow]) -> list[str]:
    """Why ``template`` cannot be rendered for every one of ``rows`` (empty when it can).

    Every ``{{`` must open a ``{{ name }}`` whose name every row has. Without rows no
    variable is known. ``rows`` are read once, one at a time (a streamed inputs file).
    """
    problems: list[str] = []
    names: list[str] = []
    for opening in re.finditer(r"\{\{", template):
        match = _VARIABLE.match(template, opening.start())
        if match:
            names.append(match.group(1))
            continue
        snippet = template[opening.start() : opening.start() + 20].split("\n")[0]
        problems.append(f"'{snippet}' is not a template variable; write {{{{ name }}}}")
    wanted = list(dict.fromkeys(names))
    if not wanted:
        return problems
    # streamed rows know the keys every row has (found when the file was scanned): no pass
    common = getattr(rows, "common_keys", None)
    if common and isinstance(rows, Sized) and len(rows) and all(n in common for n in wanted):
        return problems
    missing: dict[str, list[str]] = {name: [] for name in wanted}
    any_rows = False
    for row in rows:
        any_rows = True
        for name in wanted:
            if name not in row.values and len(missing[name]) < 6:
                missing[name].append(row.id)
    for name in wanted:
        if not any_rows:
            problems.append(
                f"template variable '{name}' has no value: the scenario has no inputs; "
                "add inputs: rows with that key, or remove the {{ }}"
            )
            continue
        ids = missing[name]
        if ids:
            shown = ", ".join(ids[:5]) + (" ..." if len(ids) > 5 else "")
            problems.append(
                f"template variable '{name}' is missing from input row(s) {shown}; "
                f"add a '{name}' column/key to every row"
            )
    return problems


def row_id_of(values: Mapping[str, Any], number: int) -> str:
    """A row's id: its ``id`` column/key as text, else its 1-based row number."""
    return _text(values["id"]) if "id" in values else str(number)


def rows_from_list(
    rows: Sequence[RawRow], file: str, where: str, at: tuple[int, int]
) -> tuple[list[InputRow], list[SpecIssue]]:
    """Turn raw rows into :class:`InputRow` objects, checking keys and ids.

    Args:
        rows: The rows read.
        file: The path printed in issues about single rows.
        where: The field path printed in those issues ("" for a separate inputs file).
        at: Where to report that there are no rows at all.
    """
    out: list[InputRow] = []
    issues: list[SpecIssue] = []
    first_line: dict[str, int] = {}
    if not rows:
        issues.append(SpecIssue(file, at[0], at[1], where, "inputs has no rows; add at least one"))
    for number, raw in enumerate(rows, start=1):
        bad = [k for k in raw.values if not isinstance(k, str)]
        if bad:
            issues.append(
                SpecIssue(file, raw.line, raw.col, where, f"row {number}: keys must be text")
            )
            continue
        values = dict(raw.values)
        row_id = row_id_of(values, number)
        if row_id in first_line:
            issues.append(
                SpecIssue(
                    file,
                    raw.line,
                    raw.col,
                    where,
                    f"duplicate input id '{row_id}' (first at line {first_line[row_id]}); "
                    "input ids must be unique",
                )
            )
            continue
        first_line[row_id] = raw.line
        out.append(InputRow(id=row_id, values=values))
    return out, issues


def read_inputs_file(path: Path, shown: str) -> tuple[list[RawRow], list[SpecIssue]]:
    """Read the rows of a CSV, JSONL or YAML inputs file.

    Args:
        path: The file to read.
        shown: How to print its path in issues.

    Returns:
        The raw rows and the issues found (each at the inputs file's own line).
    """
    kind = _FILE_KINDS.get(path.suffix.lower())
    if kind is None:
        msg = "unsupported inputs file type; use .csv, .jsonl or .yaml"
        return [], [SpecIssue(shown, 1, 1, "", msg)]
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        return [], [SpecIssue(shown, 1, 1, "", f"not UTF-8 text ({exc.reason}); save it as UTF-8")]
    if kind == "csv":
        return _read_csv(text, shown)
    if kind == "jsonl":
        return _read_jsonl(text, shown)
    return _read_yaml(text, shown)


def _read_csv(text: str, shown: str) -> tuple[list[RawRow], list[SpecIssue]]:
    return _split(csv_rows(io.StringIO(text, newline=""), shown))


def _split(found: Iterable[RawRow | SpecIssue]) -> tuple[list[RawRow], list[SpecIssue]]:
    rows: list[RawRow] = []
    issues: list[SpecIssue] = []
    for each in found:
        (issues if isinstance(each, SpecIssue) else rows).append(each)  # type: ignore[arg-type]
    return rows, issues


def csv_rows(lines: Iterable[str], shown: str) -> Iterator[RawRow | SpecIssue]:
    """The rows of a CSV file's lines (an open file, ``newline=""``), one at a time, and
    an issue in their place for each that cannot be read."""
    reader = csv.reader(lines, strict=True)
    try:
        header = next(reader, None)
        if header is None or not any(h.strip() for h in header):
            yield SpecIssue(shown, 1, 1, "", "empty CSV file; the first line names columns")
            return
        names = [h.strip() for h in header]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes or "" in names:
            what = f"duplicate column {dupes[0]!r}" if dupes else "an empty column name"
            yield SpecIssue(shown, 1, 1, "", f"the header has {what}; name columns uniquely")
            return
        start = reader.line_num + 1
        for cells in reader:
            line, start = start, reader.line_num + 1
            if not cells or all(not c.strip() for c in cells):
                continue
            if len(cells) != len(names):
                yield SpecIssue(
                    shown,
                    line,
                    1,
                    "",
                    f"row has {len(cells)} value(s) but the header has {len(names)} columns; "
                    "quote values that contain commas",
                )
                continue
            yield RawRow(dict(zip(names, cells, strict=True)), line, 1)
    except csv.Error as exc:
        yield SpecIssue(shown, reader.line_num or 1, 1, "", f"invalid CSV: {exc}")


_DEEP = object()


def _read_jsonl(text: str, shown: str) -> tuple[list[RawRow], list[SpecIssue]]:
    return _split(jsonl_rows(text.splitlines(), shown))


def jsonl_rows(lines: Iterable[str], shown: str) -> Iterator[RawRow | SpecIssue]:
    """The rows of a JSONL file's lines, one at a time, and an issue in their place for
    each that cannot be read (one issue for a file without rows)."""
    found = False
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        found = True
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            yield SpecIssue(shown, number, exc.colno, "", f"invalid JSON: {exc.msg}")
            continue
        except RecursionError:
            value = _DEEP
        if value is _DEEP or _too_deep(value):
            from qualspec.spec._yaml import MAX_DEPTH

            msg = f"invalid JSON: nested too deeply (at most {MAX_DEPTH} levels); flatten the row"
            yield SpecIssue(shown, number, 1, "", msg)
            continue
        if not isinstance(value, dict):
            msg = 'each line must be a JSON object like {"id": "a", "name": "..."}'
            yield SpecIssue(shown, number, 1, "", msg)
            continue
        yield RawRow(value, number, 1)
    if not found:
        yield SpecIssue(shown, 1, 1, "", "no rows; write one JSON object per line")


def _too_deep(value: Any) -> bool:
    """Whether a JSON value nests lists and objects deeper than the YAML limit."""
    from qualspec.spec._yaml import MAX_DEPTH

    level: list[Any] = [value]
    for _ in range(MAX_DEPTH):
        level = [
            child
            for item in level
            if isinstance(item, dict | list)
            for child in (item.values() if isinstance(item, dict) else item)
        ]
        if not level:
            return False
    return any(isinstance(item, dict | list) for item in level)


def _read_yaml(text: str, shown: str) -> tuple[list[RawRow], list[SpecIssue]]:
    from qualspec.spec._yaml import parse_yaml

    data, positions, issues = parse_yaml(text, shown)
    if issues:
        return [], issues
    if not isinstance(data, list):
        line, col = positions.find(())
        msg = "an inputs YAML file must be a list of mappings (one '- key: value' per row)"
        return [], [SpecIssue(shown, line, col, "", msg)]
    rows: list[RawRow] = []
    for i, item in enumerate(data):
        line, col = positions.find((i,))
        if not isinstance(item, dict):
            issues.append(SpecIssue(shown, line, col, f"[{i}]", "each row must be a mapping"))
            continue
        rows.append(RawRow(item, line, col))
    return rows, issues
