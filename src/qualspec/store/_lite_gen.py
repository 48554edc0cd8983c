"""Generates ``_lite_sql.py``: the SQL of the run path compiled for SQLite, as constants.

    python -m qualspec.store._lite_gen   # rewrites src/qualspec/store/_lite_sql.py

The statements are built here with SQLAlchemy Core from the schema in ``_schema`` (the
upserts by the very functions the SQLAlchemy path uses) and compiled for the SQLite
dialect, so the stdlib-``sqlite3`` path (``_lite_store``) runs what SQLAlchemy would,
without importing it. A test regenerates the module and compares: it cannot drift.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from sqlalchemy import Boolean, Float, bindparam, func, select, update
from sqlalchemy.dialects import sqlite

from qualspec.store import _cache, _lookup, _results, _runs, _shared
from qualspec.store._migrate import _fresh_ddl, file_revisions
from qualspec.store._schema import (
    JSONText,
    UTCDateTime,
    cache_entries,
    input_rows,
    judgments,
    metadata,
    prompt_versions,
    responses,
    runs,
    use_dialect,
)

__all__ = ["render", "statements"]

TARGET = Path(__file__).resolve().parent / "_lite_sql.py"
_DIALECT = sqlite.dialect()


def _p(name: str) -> Any:
    return bindparam(name)


def _in(name: str) -> Any:
    return bindparam(name, expanding=True)


def _mine() -> Any:
    r = runs.c
    return update(runs).where(
        r.id == _p("id"), r.owner_pid == _p("pid"), r.owner_host == _p("host")
    )


def _run_statements() -> dict[str, Any]:
    r = runs.c
    return {
        "run_insert": runs.insert().values({name: _p(name) for name in _shared.CREATE_COLUMNS}),
        "run_metadata": select(r.metadata).where(r.id == _p("id")),
        "run_set_metadata": update(runs).where(r.id == _p("id")).values(metadata=_p("b_meta")),
        "run_finish": update(runs)
        .where(r.id == _p("id"))
        .values(status=_p("b_status"), finished_at=_p("b_at")),
        "run_exists": select(r.id).where(r.id == _p("id")),
        "run_prefix": select(r.id)
        .where(r.id.like(_p("pattern"), escape="/"))
        .order_by(r.id)
        .limit(6),
        "run_row": select(runs).where(r.id == _p("id")),
        "run_response_totals": _runs.response_totals_query(_in("ids")),
        "run_judgment_totals": _runs.judgment_totals_query(_in("ids")),
        "run_unfinished": _runs.unfinished_query(_p("suite")),
        "lock_owner": select(r.owner_pid, r.owner_host, r.heartbeat_at).where(r.id == _p("id")),
        "lock_take": update(runs)
        .where(
            r.id == _p("id"),
            r.owner_pid.is_not_distinct_from(_p("pid")),
            r.owner_host.is_not_distinct_from(_p("host")),
            r.heartbeat_at.is_not_distinct_from(_p("beat")),
        )
        .values(owner_pid=_p("b_pid"), owner_host=_p("b_host"), heartbeat_at=_p("b_beat")),
        "lock_beat": _mine().values(heartbeat_at=_p("b_beat")),
        "lock_release": _mine().values(owner_pid=None, owner_host=None, heartbeat_at=None),
    }


def _data_statements() -> dict[str, Any]:
    pv, c = prompt_versions.c, cache_entries.c
    shim = SimpleNamespace(dialect="sqlite", insert=sqlite.insert)
    return {
        "prompt_find": select(pv.id).where(pv.name == _p("name"), pv.content_hash == _p("hash")),
        "prompt_top": select(func.max(pv.version)).where(pv.name == _p("name")),
        "prompt_insert": prompt_versions.insert()
        .values({name: _p(name) for name in ("name", "version", "content_hash", "text")})
        .values(created_at=_p("created_at"))
        .returning(pv.id),
        "prompt_by_id": select(prompt_versions).where(pv.id == _p("id")),
        "cache_get": select(cache_entries).where(c.key.in_(_in("keys"))),
        "cache_kinds": select(c.kind).distinct(),
        "input_rows_insert": sqlite.insert(input_rows)
        .values(hash=_p("hash"), row_json=_p("row_json"), created_at=_p("created_at"))
        .on_conflict_do_nothing(index_elements=["hash"]),
        "input_rows_get": select(input_rows.c.hash, input_rows.c.row_json).where(
            input_rows.c.hash.in_(_in("hashes"))
        ),
        "responses_of_run": _results.rows_query(responses, _p("run_id"), current=True),
        "responses_all_of_run": _results.rows_query(responses, _p("run_id"), current=False),
        "judgments_of_run": _results.rows_query(judgments, _p("run_id"), current=True),
        "judgments_all_of_run": _results.rows_query(judgments, _p("run_id"), current=False),
        "done_responses": _lookup.done_responses_query(_p("run_id"), _in("keys")),
        "response_page": _lookup.response_page_query(_p("run_id"), _p("after"), _p("size")),
        "done_evaluations": _lookup.done_evaluations_query(_p("run_id"), _in("keys")),
        "judgments_of": _lookup.judgments_of_query(_p("run_id"), _in("keys")),
        "present_keys": _lookup.present_keys_query(_p("run_id"), _in("keys")),
        "group_judgments": _lookup.group_judgments_query(_p("run_id")),
        "run_counts_answers": _lookup.run_counts_queries(_p("run_id"))[0],
        "run_counts_evaluations": _lookup.run_counts_queries(_p("run_id"))[1],
        "supersede_responses": _results.supersede_statements(_p("run_id"))[0],
        "supersede_evaluations": _results.supersede_statements(_p("run_id"))[1],
        "_upsert_responses": (
            _results._upsert(shim, responses, _shared.RESPONSE_CONFLICT),  # type: ignore[arg-type]
            _shared.RESPONSE_COLUMNS,
        ),
        "_upsert_judgments": (
            _results._upsert(shim, judgments, _shared.JUDGMENT_CONFLICT),  # type: ignore[arg-type]
            _shared.JUDGMENT_COLUMNS,
        ),
        "_upsert_cache": (_cache._upsert(shim), _shared.CACHE_FIELDS),  # type: ignore[arg-type]
    }


def statements() -> dict[str, Any]:
    """Each statement of the run path by name: a Core statement, or (an INSERT for many
    rows, its columns in the order rows give them)."""
    use_dialect("sqlite")
    return {**_run_statements(), **_data_statements()}


def _compile(stmt: Any) -> tuple[str, tuple[str, ...], dict[str, Any]]:
    if isinstance(stmt, tuple):
        insert, columns = stmt
        compiled = insert.compile(dialect=_DIALECT, column_keys=list(columns), for_executemany=True)
    else:
        compiled = stmt.compile(dialect=_DIALECT)
    names = tuple(compiled.positiontup or ())
    # the values SQLAlchemy binds itself (literals in the expression: 0, 1, a LIMIT, IN lists)
    plain = (str, int, float, list, tuple)  # not None (a parameter), not a marker
    given = {k: v for k, v in compiled.params.items() if type(v) in plain and k in names}
    given = {k: list(v) if isinstance(v, tuple | list) else v for k, v in given.items()}
    return " ".join(compiled.string.split()), names, given


def _kind(column: Any) -> str | None:
    kinds = ((UTCDateTime, "datetime"), (JSONText, "json"), (Boolean, "bool"), (Float, "float"))
    return next((name for type_, name in kinds if isinstance(column.type, type_)), None)


def render() -> str:
    """The text of ``_lite_sql.py``."""
    use_dialect("sqlite")  # the partial unique indexes' WHERE, before the DDL is compiled
    out = [
        '"""The SQL of the SQLite run path (see ``_lite_gen``). generated: do not edit."""',
        "",
        "# generated by `python -m qualspec.store._lite_gen`: do not edit",
        "# ruff: noqa: E501",
        "",
        "from __future__ import annotations",
        "",
        "from typing import Any",
        "",
        '__all__ = ["COLUMNS", "FRESH_DDL", "HEAD", "SQL"]',
        "",
        f"HEAD = {file_revisions()[-1]!r}",
        '"""The schema revision these statements are for."""',
        "",
        "FRESH_DDL: tuple[str, ...] = (",
    ]
    ddl = _fresh_ddl(SimpleNamespace(dialect=_DIALECT))  # type: ignore[arg-type]
    out += [f"    {statement!r}," for statement in ddl]  # as is: SQLite keeps the text
    out += [")", "", "COLUMNS: dict[str, tuple[tuple[str, str | None], ...]] = {"]
    for table in metadata.sorted_tables:
        cols = ", ".join(f"({c.name!r}, {_kind(c)!r})" for c in table.c)
        out.append(f"    {table.name!r}: ({cols},),")
    out += ["}", '"""Each table\'s columns in order, with how a value is converted."""', ""]
    out.append("SQL: dict[str, tuple[str, tuple[str, ...], dict[str, Any]]] = {")
    for name, stmt in sorted(statements().items()):
        sql, params, given = _compile(stmt)
        out.append(f"    {name.lstrip('_')!r}: ({sql!r}, {params!r}, {given!r}),")
    out += [
        "}",
        '"""Each statement: its SQL (qmark parameters; ``__[POSTCOMPILE_name]`` is a list\'s',
        'place), its parameters\' names in order, and the values SQLAlchemy binds itself."""',
        "",
    ]
    return "\n".join(out)


def main() -> int:
    TARGET.write_text(render(), encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
