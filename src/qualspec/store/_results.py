"""Responses and evaluation records (judgments): idempotent batch upserts and reads.

Upsert rule (per unique key): a new row is inserted; an existing error row is replaced
by whatever comes later; an existing success (scored, unscored or text) is kept.
Responses are keyed by (run, key); evaluation records by (run, evaluator, response key,
criterion), where the criterion enters the key as ``criterion_hash`` (its SHA-256) so
that criteria of any length can be unique on PostgreSQL too (see migration 0004).

Superseded rows (see ``supersede``) are outside the keys: a key is unique among a run's
current rows only (migration 0005), and every read here skips superseded rows unless
asked for them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, select, true, update

from qualspec.errors import StoreError
from qualspec.store._db import Database
from qualspec.store._input_rows import attach_rows, insert_rows, memo_for
from qualspec.store._records import (
    JUDGMENT_FIELDS,
    RESPONSE_FIELDS,
    JudgmentRecord,
    ResponseRecord,
    judgment_from_row,
    response_from_row,
)
from qualspec.store._schema import CURRENT_ONLY, judgments, responses, runs
from qualspec.store._shared import (
    CRITERIA,
    JUDGMENT_COLUMNS,
    JUDGMENT_CONFLICT,
    RESPONSE_COLUMNS,
    RESPONSE_CONFLICT,
    R,
    criterion_hash,
    judgment_order,
    judgment_rows,
    response_order,
    response_rows,
)

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

__all__ = [
    "criterion_hash",
    "evaluation_keys",
    "judgment_from_row",
    "judgment_keys",
    "load_judgments",
    "load_responses",
    "record_judgments",
    "record_responses",
    "response_from_row",
    "response_keys",
    "supersede",
]

_STATEMENTS: dict[tuple[str, str], Any] = {}


def _upsert(db: Database, table: Any, conflict: tuple[str, ...]) -> Any:
    cache_key = (db.dialect, table.name)
    stmt = _STATEMENTS.get(cache_key)
    if stmt is None:
        ins = db.insert(table)
        skip = {"id", *conflict}
        stmt = ins.on_conflict_do_update(
            index_elements=list(conflict),
            index_where=CURRENT_ONLY[table.name],
            set_={c.name: ins.excluded[c.name] for c in table.c if c.name not in skip},
            where=table.c.error.is_not(None),
        )
        _STATEMENTS[cache_key] = stmt
    return stmt


@contextlib.contextmanager
def _run_must_exist(db: Database, run_id: str) -> Iterator[None]:
    """Turn a foreign-key failure on ``run_id`` into a message that says what to do."""
    try:
        yield
    except StoreError:
        with db.read() as conn:
            exists = conn.execute(select(runs.c.id).where(runs.c.id == run_id)).first()
        if exists is None:
            raise StoreError(
                f"cannot record results for run '{run_id}': no such run; see `qualspec runs list`"
            ) from None
        raise


def record_responses(db: Database, run_id: str, records: Sequence[ResponseRecord]) -> None:
    """Upsert a batch of responses in one transaction, with the input rows they name
    (stored once each: see ``_input_rows``). A record's ``input_hash`` is set here, from
    its ``input_values`` (None without them)."""
    if not records:
        return
    rows, inputs = response_rows(run_id, records, memo_for(db).entry)
    insert = db.bulk_insert(
        "responses", lambda: _upsert(db, responses, RESPONSE_CONFLICT), RESPONSE_COLUMNS
    )
    with _run_must_exist(db, run_id), db.write() as conn:
        insert_rows(db, conn, inputs)
        insert.execute(conn, rows)


def record_judgments(db: Database, run_id: str, records: Sequence[JudgmentRecord]) -> None:
    """Upsert a batch of evaluation records in one transaction.

    Keyed by (evaluator, response_key, criterion) within the run.
    """
    if not records:
        return
    rows = judgment_rows(run_id, records)
    insert = db.bulk_insert(
        "judgments", lambda: _upsert(db, judgments, JUDGMENT_CONFLICT), JUDGMENT_COLUMNS
    )
    with _run_must_exist(db, run_id), db.write() as conn:
        insert.execute(conn, rows)


def response_keys(db: Database, run_id: str, ok_only: bool = True) -> set[str]:
    """Keys of the responses recorded for a run (only successes when ``ok_only``)."""
    query = select(responses.c.key).where(responses.c.run_id == run_id, ~responses.c.superseded)
    if ok_only:
        query = query.where(responses.c.error.is_(None))
    with db.read() as conn:
        return set(conn.execute(query).scalars())


def judgment_keys(db: Database, run_id: str) -> set[tuple[str, str]]:
    """(response_key, criterion) of the criteria judge's final records (not errors)."""
    j = judgments.c
    query = select(j.response_key, j.criterion).where(
        j.run_id == run_id, j.evaluator == CRITERIA, j.error.is_(None), ~j.superseded
    )
    with db.read() as conn:
        return {(str(a), str(b)) for a, b in conn.execute(query)}


def evaluation_keys(db: Database, run_id: str) -> set[tuple[str, str, str]]:
    """(evaluator, response_key, criterion) of every final record (not errors)."""
    j = judgments.c
    query = select(j.evaluator, j.response_key, j.criterion).where(
        j.run_id == run_id, j.error.is_(None), ~j.superseded
    )
    with db.read() as conn:
        return {(str(a), str(b), str(c)) for a, b, c in conn.execute(query)}


def _load(
    db: Database,
    run_id: str,
    include_superseded: bool,
    table: Any,
    record: type[R],
    names: tuple[str, ...],
    attach: Callable[[Connection, list[R]], None] | None = None,
) -> list[R]:
    """A run's current rows of ``table`` (all with ``include_superseded``) as ``record``s,
    unordered; ``attach`` completes them in the same read transaction."""
    with db.read() as conn:
        rows = conn.execute(rows_query(table, run_id, current=not include_superseded)).mappings()
        out = [record(**{name: row[name] for name in names}) for row in rows.all()]
        if attach is not None:
            attach(conn, out)
        return out


def rows_query(table: Any, run_id: Any, *, current: bool) -> Any:
    """The run's rows of ``table`` (only its current ones when ``current``)."""
    query = select(table).where(table.c.run_id == run_id)
    return query.where(~table.c.superseded) if current else query


def load_responses(
    db: Database, run_id: str, include_superseded: bool = False
) -> list[ResponseRecord]:
    """A run's current responses (all with ``include_superseded``), ordered by scenario,
    input, role, candidate, temperature, run; each with its input row's values."""
    out = _load(
        db, run_id, include_superseded, responses, ResponseRecord, RESPONSE_FIELDS, attach_rows
    )
    out.sort(key=response_order)
    return out


def load_judgments(
    db: Database,
    run_id: str,
    ordered: Sequence[ResponseRecord],
    include_superseded: bool = False,
) -> list[JudgmentRecord]:
    """A run's current evaluation records (all with ``include_superseded``) in the order
    of their subjects' responses (``ordered``).

    Records whose ``response_key`` is no response's (group subjects) come last, by key;
    within one key the criteria judge's records come first, then other evaluators' by
    name, each by criterion (current before superseded).
    """
    out = _load(db, run_id, include_superseded, judgments, JudgmentRecord, JUDGMENT_FIELDS)
    out.sort(key=judgment_order(ordered))
    return out


def supersede(
    db: Database,
    run_id: str,
    response_keys: Iterable[str] = (),
    evaluation_keys: Iterable[tuple[str, str, str]] = (),
) -> None:
    """Mark current rows of a run superseded, in one transaction.

    ``response_keys`` name responses by key; ``evaluation_keys`` name evaluation records
    by (evaluator, response_key, criterion). Rows already superseded, and keys with no
    current row, are left as they are.
    """
    resp = [{"b_key": key} for key in sorted(set(response_keys))]
    evals = [
        {"b_evaluator": e, "b_response_key": k, "b_hash": criterion_hash(c)}
        for e, k, c in sorted(set(evaluation_keys))
    ]
    if not resp and not evals:
        return
    by_key, by_evaluation = supersede_statements(run_id)
    with db.write() as conn:
        if resp:
            conn.execute(by_key, resp)
        if evals:
            conn.execute(by_evaluation, evals)


def supersede_statements(run_id: Any) -> tuple[Any, Any]:
    """The UPDATEs marking the run's current responses superseded by ``b_key``, and its
    current evaluation records by ``b_evaluator``, ``b_response_key`` and ``b_hash``."""
    r, j = responses.c, judgments.c
    by_key = (
        update(responses)
        .where(r.run_id == run_id, r.key == bindparam("b_key"), ~r.superseded)
        .values(superseded=true())
    )
    by_evaluation = (
        update(judgments)
        .where(
            j.run_id == run_id,
            j.evaluator == bindparam("b_evaluator"),
            j.response_key == bindparam("b_response_key"),
            j.criterion_hash == bindparam("b_hash"),
            ~j.superseded,
        )
        .values(superseded=true())
    )
    return by_key, by_evaluation
