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
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, select, true, update

from qualspec.errors import StoreError
from qualspec.store._clock import now_utc
from qualspec.store._db import Database
from qualspec.store._input_rows import attach_rows, insert_rows, memo_for
from qualspec.store._records import JudgmentRecord, ResponseRecord
from qualspec.store._schema import CURRENT_ONLY, judgments, responses, runs
from qualspec.store._shared import (
    CRITERIA,
    criterion_hash,
)
from qualspec.store._shared import (
    J_CREATED as _J_CREATED,
)
from qualspec.store._shared import (
    J_DETAILS as _J_DETAILS,
)
from qualspec.store._shared import (
    J_SCORES as _J_SCORES,
)
from qualspec.store._shared import (
    J_SUBJECT as _J_SUBJECT,
)
from qualspec.store._shared import (
    JUDGMENT_COLUMNS as _JUDGMENT_COLUMNS,
)
from qualspec.store._shared import (
    JUDGMENT_CONFLICT as _JUDGMENT_CONFLICT,
)
from qualspec.store._shared import (
    JUDGMENT_FIELDS as _JUDGMENT_FIELDS,
)
from qualspec.store._shared import (
    R_CREATED as _R_CREATED,
)
from qualspec.store._shared import (
    R_INPUT as _R_INPUT,
)
from qualspec.store._shared import (
    R_VERSIONS as _R_VERSIONS,
)
from qualspec.store._shared import (
    RESPONSE_COLUMNS as _RESPONSE_COLUMNS,
)
from qualspec.store._shared import (
    RESPONSE_CONFLICT as _RESPONSE_CONFLICT,
)
from qualspec.store._shared import (
    RESPONSE_FIELDS as _RESPONSE_FIELDS,
)
from qualspec.store._shared import (
    R as _R,
)
from qualspec.store._shared import (
    dedupe as _dedupe,
)
from qualspec.store._shared import (
    judgment_key as _judgment_key,
)
from qualspec.store._shared import (
    judgment_values as _judgment_values,
)
from qualspec.store._shared import (
    response_key as _response_key,
)
from qualspec.store._shared import (
    response_order as _response_order,
)
from qualspec.store._shared import (
    response_values as _response_values,
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


def _upsert_batch(
    db: Database,
    run_id: str,
    records: Sequence[_R],
    *,
    table: Any,
    conflict: tuple[str, ...],
    columns: tuple[str, ...],
    key: Callable[[_R], Hashable],
    row: Callable[[_R], list[Any]],
    created: int,
    before: Callable[[Connection], None] | None = None,
) -> None:
    """Upsert a batch of records (one ``row`` each, ``columns`` in order) in one
    transaction, after ``before`` (given the connection, once every ``row`` is made); a
    row without a creation time is given the batch's."""
    if not records:
        return
    now = now_utc()
    insert = db.bulk_insert(table.name, lambda: _upsert(db, table, conflict), columns)
    rows = []
    for rec in _dedupe(records, key):
        values = row(rec)
        if values[created] is None:
            values[created] = now
        rows.append(values)
    with _run_must_exist(db, run_id), db.write() as conn:
        if before is not None:
            before(conn)
        insert.execute(conn, rows)


def record_responses(db: Database, run_id: str, records: Sequence[ResponseRecord]) -> None:
    """Upsert a batch of responses in one transaction, with the input rows they name
    (stored once each: see ``_input_rows``). A record's ``input_hash`` is set here, from
    its ``input_values`` (None without them)."""
    rows: dict[str, str] = {}  # hash -> JSON of the batch's input rows
    memo = memo_for(db)

    def row(rec: ResponseRecord) -> list[Any]:
        values = [run_id, *_response_values(rec)]
        versions = values[_R_VERSIONS]
        if type(versions) is not dict:  # a mapping of another type: stored as a plain dict
            values[_R_VERSIONS] = dict(versions)
        found: str | None = None
        if rec.input_values is not None:
            found, text = memo.entry(rec.input_values)
            rows[found] = text
        values[_R_INPUT] = rec.input_hash = found
        return values

    _upsert_batch(
        db,
        run_id,
        records,
        table=responses,
        conflict=_RESPONSE_CONFLICT,
        columns=_RESPONSE_COLUMNS,
        key=_response_key,
        row=row,
        created=_R_CREATED,
        before=lambda conn: insert_rows(db, conn, rows),
    )


def record_judgments(db: Database, run_id: str, records: Sequence[JudgmentRecord]) -> None:
    """Upsert a batch of evaluation records in one transaction.

    Keyed by (evaluator, response_key, criterion) within the run.
    """

    def row(rec: JudgmentRecord) -> list[Any]:
        values = [run_id, criterion_hash(rec.criterion), *_judgment_values(rec)]
        # stored as plain JSON values (a tuple or another mapping type becomes a list/dict)
        for i, plain in ((_J_SUBJECT, list), (_J_SCORES, dict), (_J_DETAILS, dict)):
            if values[i] is not None and type(values[i]) is not plain:
                values[i] = plain(values[i])
        return values

    _upsert_batch(
        db,
        run_id,
        records,
        table=judgments,
        conflict=_JUDGMENT_CONFLICT,
        columns=_JUDGMENT_COLUMNS,
        key=_judgment_key,
        row=row,
        created=_J_CREATED,
    )


def response_from_row(row: Any) -> ResponseRecord:
    """A response as read from a row of ``responses`` (a mapping of its columns)."""
    return ResponseRecord(**{name: row[name] for name in _RESPONSE_FIELDS})


def judgment_from_row(row: Any) -> JudgmentRecord:
    """An evaluation record as read from a row of ``judgments``."""
    return JudgmentRecord(**{name: row[name] for name in _JUDGMENT_FIELDS})


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
    record: type[_R],
    names: tuple[str, ...],
    attach: Callable[[Connection, list[_R]], None] | None = None,
) -> list[_R]:
    """A run's current rows of ``table`` (all with ``include_superseded``) as ``record``s,
    unordered; ``attach`` completes them in the same read transaction."""
    query = select(table).where(table.c.run_id == run_id)
    if not include_superseded:
        query = query.where(~table.c.superseded)
    with db.read() as conn:
        rows = conn.execute(query).mappings()
        out = [record(**{name: row[name] for name in names}) for row in rows.all()]
        if attach is not None:
            attach(conn, out)
        return out


def load_responses(
    db: Database, run_id: str, include_superseded: bool = False
) -> list[ResponseRecord]:
    """A run's current responses (all with ``include_superseded``), ordered by scenario,
    input, role, candidate, temperature, run; each with its input row's values."""
    out = _load(
        db, run_id, include_superseded, responses, ResponseRecord, _RESPONSE_FIELDS, attach_rows
    )
    out.sort(key=_response_order)
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
    out = _load(db, run_id, include_superseded, judgments, JudgmentRecord, _JUDGMENT_FIELDS)
    position = {rec.key: i for i, rec in enumerate(ordered)}
    out.sort(
        key=lambda j: (
            position.get(j.response_key, len(position)),
            j.response_key,
            j.evaluator != CRITERIA,
            j.evaluator,
            j.criterion,
            j.superseded,
        )
    )
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
    r, j = responses.c, judgments.c
    resp = [{"b_key": key} for key in sorted(set(response_keys))]
    evals = [
        {"b_evaluator": e, "b_response_key": k, "b_hash": criterion_hash(c)}
        for e, k, c in sorted(set(evaluation_keys))
    ]
    if not resp and not evals:
        return
    with db.write() as conn:
        if resp:
            conn.execute(
                update(responses)
                .where(r.run_id == run_id, r.key == bindparam("b_key"), ~r.superseded)
                .values(superseded=true()),
                resp,
            )
        if evals:
            conn.execute(
                update(judgments)
                .where(
                    j.run_id == run_id,
                    j.evaluator == bindparam("b_evaluator"),
                    j.response_key == bindparam("b_response_key"),
                    j.criterion_hash == bindparam("b_hash"),
                    ~j.superseded,
                )
                .values(superseded=true()),
                evals,
            )
