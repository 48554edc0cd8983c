"""Cached answers copied by SQLite itself (issue 20: the cached rerun of a million cells).

A cached rerun records, for each cell, an answer the cache already holds. Instead of
reading each cache entry into Python, making a ``ResponseRecord`` of it and writing that
back, the engine hands the store each cell's identity and cache key (a plain tuple, see
:data:`COPY_FIELDS`); the store writes those to a temporary table in one ``executemany``
and one ``INSERT INTO responses (...) SELECT ... FROM <temp> JOIN cache_entries`` makes
the response rows, with the same values ``ResponseRecord.from_cache_entry`` gives (nothing
paid, no attempt, no queue time, ``cached``, the entry's key as ``call_key``) and the same
upsert rule as every other answer (the generated ``upsert_responses``' own ``ON
CONFLICT`` clause).

Which cells the cache answers is found first, with :func:`cache_hits` (the keys, the
freshness of each entry and its tokens, for the money saved; not its text); an entry gone
between the two (``qualspec cache clear`` meanwhile) makes no row, and a resumed run asks
that cell again.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from qualspec.store._lite_ops import to_db
from qualspec.store._lite_sql import SQL
from qualspec.store._shared import (
    COPY_CONSTANTS,
    COPY_FIELDS,
    COPY_FROM_CACHE,
    JSON_ENCODER,
    RESPONSE_COLUMNS,
    fresh,
)

__all__ = ["cache_hits", "copy_cached"]

log = logging.getLogger("qualspec.store")


_TEMP = "qualspec_cached_copy"
# the temporary table's columns (a cell's fields, its input row's hash for its values): no
# type (no affinity), so each value keeps the class it is bound with, and ``responses``'
# own affinity applies as it does to a bound record
_STAGED = (*(name for name in COPY_FIELDS if name != "input_values"), "input_hash")
_CHUNK = 500  # keys per IN (...) list
_HITS = (
    'SELECT "key", kind, created_at, expires_at, input_tokens, output_tokens '
    'FROM cache_entries WHERE "key" IN ({})'
)


def _column(name: str) -> str:
    """The value of response column ``name`` in the copy's SELECT."""
    if name == "run_id":
        return "?"
    if name in _STAGED:
        return f't."{name}"'
    if name in COPY_FROM_CACHE:
        return f'c."{name}"'
    if name in COPY_CONSTANTS:
        return COPY_CONSTANTS[name]
    raise ValueError(f"responses.{name}: say how a cached copy fills it (store/_lite_copy.py)")


def _copy_sql() -> str:
    upsert = SQL["upsert_responses"][0]
    conflict = upsert[upsert.index(" ON CONFLICT ") :]  # the upsert rule, as generated
    columns = ", ".join(f'"{name}"' for name in RESPONSE_COLUMNS)
    values = ", ".join(_column(name) for name in RESPONSE_COLUMNS)
    # WHERE true: SQLite's parser needs a WHERE before an upsert's ON CONFLICT
    return (
        f"INSERT INTO responses ({columns}) SELECT {values} FROM temp.{_TEMP} AS t "
        f'JOIN cache_entries AS c ON c."key" = t.call_key WHERE true ORDER BY t.rowid' + conflict
    )


_COPY = _copy_sql()
_QUOTED = ", ".join(f'"{name}"' for name in _STAGED)
_CREATE = f"CREATE TEMP TABLE IF NOT EXISTS {_TEMP} ({_QUOTED})"
_STAGE = f"INSERT INTO temp.{_TEMP} VALUES ({', '.join('?' * len(_STAGED))})"
_CLEAR = f"DELETE FROM temp.{_TEMP}"
_INPUTS = "input_rows_insert"


def cache_hits(
    conn: sqlite3.Connection,
    keys: Iterable[str],
    moment: datetime,
    ttl: Mapping[str, float | None],
) -> dict[str, tuple[int | None, int | None]]:
    """The keys among ``keys`` whose cache entry may be read at ``moment`` (what
    ``cache_get_many`` would return), each with its entry's input and output tokens."""
    wanted = list(dict.fromkeys(keys))
    out: dict[str, tuple[int | None, int | None]] = {}
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start : start + _CHUNK]
        for key, kind, created, expires, tokens_in, tokens_out in conn.execute(
            _HITS.format(", ".join("?" * len(chunk))), chunk
        ):
            if _fresh(kind, created, expires, ttl, moment):
                out[key] = (tokens_in, tokens_out)
    return out


def _fresh(
    kind: str,
    created: str | None,
    expires: str | None,
    ttl: Mapping[str, float | None],
    moment: datetime,
) -> bool:
    """``fresh`` of a row read as stored: a time parsed only where the rule reads it."""
    if kind in ttl:
        if ttl[kind] is None or created is None:
            return True
        return fresh({"kind": kind, "created_at": _when(created)}, ttl, moment)
    return expires is None or fresh({"kind": kind, "expires_at": _when(expires)}, ttl, moment)


def _when(text: str) -> datetime:
    """A stored time as SQLAlchemy's type reads it (aware, UTC)."""
    found = datetime.fromisoformat(text)
    return found.replace(tzinfo=UTC) if found.tzinfo is None else found.astimezone(UTC)


def copy_cached(
    conn: sqlite3.Connection,
    run_id: str,
    cells: Sequence[Sequence[Any]],
    row_entry: Callable[[Mapping[str, Any]], tuple[str, str]],
    now: datetime,
) -> int:
    """Record ``cells`` (each as :data:`COPY_FIELDS`) as answers of ``run_id``, copied
    from their cache entries, in ``conn``'s write transaction; the input rows they name
    are stored too (``row_entry``: ``_input_rows.RowMemo.entry``; ``now`` their time).
    Returns how many rows were written."""
    if not cells:
        return 0
    staged, inputs = _staged(cells, row_entry)
    conn.execute(_CREATE)
    conn.executemany(_STAGE, staged)
    if inputs:
        at = to_db("input_rows", "created_at", now)
        # sorted: two writers never wait on each other's rows in turn
        sql = SQL[_INPUTS][0]
        conn.executemany(sql, [(h, inputs[h], at) for h in sorted(inputs)])
    written = conn.execute(_COPY, (run_id,)).rowcount
    conn.execute(_CLEAR)
    if written < len(staged):  # their entries went meanwhile (`qualspec cache clear`)
        log.warning(
            "%d cached answers were gone from the cache before they were recorded: "
            "`qualspec run --resume` asks for them",
            len(staged) - written,
        )
    return int(written)


def _staged(
    cells: Sequence[Sequence[Any]], row_entry: Callable[[Mapping[str, Any]], tuple[str, str]]
) -> tuple[list[tuple[Any, ...]], dict[str, str]]:
    """The temporary table's rows of ``cells`` (values as the store binds them) and the
    JSON of the input rows they name, by hash."""
    versions: dict[int, tuple[Mapping[str, int], str]] = {}  # by id: one encoding each
    times: dict[datetime, str] = {}
    inputs: dict[str, str] = {}
    out: list[tuple[Any, ...]] = []
    encode = JSON_ENCODER.encode
    for cell in cells:
        (key, candidate, role, scenario, input_id, temperature, run_index, provider, model,
         kind, values, call_key, prompt_versions, created_at) = cell  # fmt: skip
        found = versions.get(id(prompt_versions))
        if found is None or found[0] is not prompt_versions:
            found = versions[id(prompt_versions)] = (prompt_versions, encode(dict(prompt_versions)))
        stamp = times.get(created_at)
        if stamp is None:
            stamp = times[created_at] = to_db("responses", "created_at", created_at)
        row_hash: str | None = None
        if values is not None:
            row_hash, text = row_entry(values)
            inputs[row_hash] = text
        out.append(
            (key, candidate, role, scenario, input_id,
             None if temperature is None else float(temperature), run_index, provider, model,
             kind, call_key, found[1], stamp, row_hash)
        )  # fmt: skip
    return out, inputs
