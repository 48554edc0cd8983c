"""Statements of ``_lite_sql`` run on the stdlib driver, with the values SQLAlchemy's
types would write and read: UTC datetimes as naive ``YYYY-MM-DD HH:MM:SS.ffffff`` text,
JSON columns as compact sorted text, booleans as 0/1, floats as floats."""

from __future__ import annotations

import json
import operator
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from qualspec.store._lite_sql import COLUMNS, SQL
from qualspec.store._shared import JSON_ENCODER

__all__ = ["BulkWrite", "execute", "fetch", "json_rows", "read_rows", "to_db"]

_EXPAND = "__[POSTCOMPILE_{}]"


def _dt_in(value: datetime) -> str:
    value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return (
        f"{value.year:04d}-{value.month:02d}-{value.day:02d} "
        f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}.{value.microsecond:06d}"
    )


def _bool_in(value: Any) -> int:
    if value not in (True, False):  # SQLAlchemy's Boolean refuses other values too
        raise TypeError(f"Not a boolean value: {value!r}")
    return int(value)


def _dt_out(value: str) -> datetime:
    found = datetime.fromisoformat(value)
    return found.replace(tzinfo=UTC) if found.tzinfo is None else found.astimezone(UTC)


_IN: dict[str | None, Callable[[Any], Any] | None] = {
    "datetime": _dt_in,
    "json": JSON_ENCODER.encode,
    "bool": _bool_in,
    "float": float,
    None: None,
}
_OUT: dict[str | None, Callable[[Any], Any] | None] = {
    "datetime": _dt_out,
    "json": json.loads,
    "bool": bool,
    "float": None,
    None: None,
}
_KINDS = {table: dict(columns) for table, columns in COLUMNS.items()}


def to_db(table: str, column: str, value: Any) -> Any:
    """``value`` of ``table.column`` as SQLAlchemy would bind it."""
    convert = _IN[_KINDS[table][column]]
    return value if value is None or convert is None else convert(value)


def _bind(name: str, params: Mapping[str, Any]) -> tuple[str, list[Any]]:
    sql, names, given = SQL[name]
    values: list[Any] = []
    for param in names:
        value = params[param] if param in params else given.get(param)
        marker = _EXPAND.format(param)
        if marker in sql:  # an IN list: one placeholder per item
            items = list(value or ())
            sql = sql.replace(marker, ", ".join("?" * len(items)) if items else "NULL")
            values.extend(items)
        else:
            values.append(value)
    return sql, values


def execute(conn: sqlite3.Connection, name: str, /, **params: Any) -> sqlite3.Cursor:
    """Run statement ``name`` with ``params`` (already in their stored form)."""
    sql, values = _bind(name, params)
    return conn.execute(sql, values)


_FLAT = (str, int, float, bool, type(None))
_MEMO_TEXTS = 256


def _json_out() -> Callable[[str], Any]:
    """``json.loads`` for one column of many rows: a flat object met before (the prompt
    versions of a run's answers, the same text on every row) is copied, not parsed again
    (a fresh dict each time: the caller may change it)."""
    memo: dict[str, dict[str, Any]] = {}

    def load(text: str) -> Any:
        found = memo.get(text)
        if found is not None:
            return dict(found)
        value = json.loads(text)
        if (
            type(value) is dict
            and len(memo) < _MEMO_TEXTS
            and all(type(v) in _FLAT for v in value.values())
        ):
            memo[text] = dict(value)
        return value

    return load


def read_rows(table: str, names: Sequence[str] | None = None) -> Callable[[Any], dict[str, Any]]:
    """A function making a row of ``table`` (its ``names`` columns, default all, in that
    order) a dict of Python values, as SQLAlchemy's types read them."""
    columns = names or [name for name, _ in COLUMNS[table]]
    kinds = [_KINDS[table][name] for name in columns]
    steps = [
        (i, name, _json_out() if kind == "json" else _OUT[kind])
        for i, (name, kind) in enumerate(zip(columns, kinds, strict=True))
    ]

    def read(row: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for i, name, convert in steps:
            value = row[i]
            out[name] = value if value is None or convert is None else convert(value)
        return out

    return read


def fetch(
    conn: sqlite3.Connection,
    name: str,
    table: str,
    names: Sequence[str] | None = None,
    **params: Any,
) -> list[dict[str, Any]]:
    """The rows of statement ``name`` (a select of ``table``'s ``names``), read."""
    read = read_rows(table, names)
    return [read(row) for row in execute(conn, name, **params).fetchall()]


def iso_utc(text: str) -> str:
    """A stored UTC time (``YYYY-MM-DD HH:MM:SS.ffffff``) as ``datetime.isoformat`` writes
    it once read (``+00:00``; no fraction when it is zero), without making the datetime."""
    if len(text) == 26 and text[10] == " " and text[19] == ".":
        fraction = text[19:]
        return f"{text[:10]}T{text[11:19]}{'' if fraction == '.000000' else fraction}+00:00"
    return _dt_out(text).isoformat()


_JSON_OUT: dict[str | None, Callable[[Any], Any]] = {
    "datetime": iso_utc,
    "json": json.loads,
    "bool": bool,
}


def json_rows(table: str, names: Sequence[str]) -> Callable[[Any], dict[str, Any]]:
    """A function making a row of ``table`` (every column, in order) the dict of ``names``
    (in that order) with JSON values: times as ISO-8601 text, booleans as booleans. A name
    that is no column is None (``input_values``: not read here). What ``fetch`` and a
    record would make of the row, then ``json_fields``, in a few steps a row: the results
    file of a large run writes a million of them."""
    columns = [name for name, _ in COLUMNS[table]]
    kinds = _KINDS[table]
    present = [name for name in names if name in kinds]
    at = [columns.index(name) for name in present]
    take = operator.itemgetter(*at) if len(at) > 1 else lambda row: tuple(row[i] for i in at)
    fixes = [(name, _JSON_OUT[kinds[name]]) for name in present if kinds[name] in _JSON_OUT]
    template = dict.fromkeys(names)

    def make(row: Any) -> dict[str, Any]:
        item = template.copy()  # the order of names, whatever is filled in
        item.update(zip(present, take(row), strict=True))
        for name, convert in fixes:
            value = item[name]
            if value is not None:
                item[name] = convert(value)
        return item

    return make


class BulkWrite:
    """An INSERT .. ON CONFLICT of ``_lite_sql`` for many rows (lists in ``columns``
    order), sent as one ``executemany`` with each column's value converted once."""

    def __init__(self, name: str, table: str, columns: Sequence[str]) -> None:
        self.sql, names, _ = SQL[name]
        if sorted(names) != sorted(columns):
            raise ValueError(f"{name} takes {names}, not {tuple(columns)}")
        kinds = _KINDS[table]
        self._steps = [
            (i, convert)
            for i, column in enumerate(columns)
            if (convert := _IN[kinds[column]]) is not None
        ]
        self._params = operator.itemgetter(*(list(columns).index(n) for n in names))

    def execute(self, conn: sqlite3.Connection, rows: Iterable[list[Any]]) -> None:
        """Insert ``rows`` (changed in place) in one executemany."""
        steps, as_params = self._steps, self._params
        params: list[Any] = []
        for row in rows:
            for i, convert in steps:
                value = row[i]
                if value is not None:
                    row[i] = convert(value)
            params.append(as_params(row))
        if params:
            conn.executemany(self.sql, params)
