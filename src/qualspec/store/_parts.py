"""Parts of a run, for a viewer at size: one page of answers with their evaluation records
(:func:`load_run_part`), the rows' database ids (:func:`response_ids`), a stamp that changes
whenever the run's rows do (:func:`run_stamp`), and the answers whose texts contain a word
(:func:`search_run`).

Every read skips superseded rows, as :func:`qualspec.store._results.load_responses` does.
Pages are read by primary key (the ids a viewer kept) or by ``LIMIT``/``OFFSET`` in the
order the rows were recorded; their evaluation records through the run's index.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from typing import Any

from sqlalchemy import func, or_, select

from qualspec.store._db import Database
from qualspec.store._input_rows import attach_rows
from qualspec.store._records import (
    JudgmentRecord,
    ResponseRecord,
    judgment_from_row,
    response_from_row,
)
from qualspec.store._schema import CURRENT_ONLY, input_rows, judgments, responses, runs
from qualspec.store._shared import CRITERIA

__all__ = [
    "load_run_part",
    "response_cells",
    "response_ids",
    "run_evaluators",
    "run_stamp",
    "search_run",
]

CHUNK = 500  # ids or keys per IN (...): well under every backend's parameter limit


def _chunks(values: Sequence[str] | Sequence[int]) -> list[Sequence[str] | Sequence[int]]:
    return [values[i : i + CHUNK] for i in range(0, len(values), CHUNK)]


def load_run_part(
    db: Database,
    run_id: str,
    ids: Sequence[int] | None = None,
    offset: int = 0,
    limit: int | None = None,
    evaluators: Sequence[str] | None = None,
) -> tuple[list[ResponseRecord], list[JudgmentRecord]]:
    """Some of a run's current responses and their current evaluation records.

    ``ids`` (database ids, as :func:`response_ids` gives them) picks the responses, in that
    order (ids of no current response of the run are skipped); without them, ``limit``
    responses from ``offset`` in the order they were recorded. Each response's records
    follow it, the criteria judge's first, then other evaluators' by name, each by
    criterion; only those of ``evaluators`` when given (which lets the database find them
    through the unique index on run, evaluator and response, without reading the rest of
    the run's records).
    """
    r = responses.c
    where = [r.run_id == run_id, CURRENT_ONLY["responses"]]
    with db.read() as conn:
        if ids is None:
            query = select(responses).where(*where).order_by(r.id).offset(max(0, offset))
            if limit is not None:
                query = query.limit(max(0, limit))
            rows = list(conn.execute(query).mappings())
        else:
            wanted = list(dict.fromkeys(int(i) for i in ids))
            found: dict[int, Any] = {}
            for chunk in _chunks(wanted):
                query = select(responses).where(*where, r.id.in_(chunk))
                found.update({row["id"]: row for row in conn.execute(query).mappings()})
            rows = [found[i] for i in wanted if i in found]
        out = [response_from_row(row) for row in rows]
        attach_rows(conn, out)
        keys = [rec.key for rec in out]
        j = judgments.c
        records: list[JudgmentRecord] = []
        for chunk in _chunks(keys):
            query = select(judgments).where(
                j.run_id == run_id, CURRENT_ONLY["judgments"], j.response_key.in_(chunk)
            )
            if evaluators is not None:
                query = query.where(j.evaluator.in_(sorted(set(evaluators))))
            for row in conn.execute(query).mappings():
                records.append(judgment_from_row(row))
    position = {key: i for i, key in enumerate(keys)}
    records.sort(
        key=lambda x: (
            position[x.response_key],
            x.evaluator != CRITERIA,
            x.evaluator,
            x.criterion,
        )
    )
    return out, records


def response_ids(db: Database, run_id: str) -> dict[str, int]:
    """Response key -> database id, for a run's current responses."""
    r = responses.c
    query = select(r.key, r.id).where(r.run_id == run_id, CURRENT_ONLY["responses"])
    with db.read() as conn:
        return {str(key): int(i) for key, i in conn.execute(query)}


def response_cells(
    db: Database, run_id: str, size: int = 20_000
) -> Iterator[list[tuple[int, str, str | None, str | None, str, float | None, int]]]:
    """A run's current candidate responses as (id, scenario, input id, role, candidate,
    temperature, run index), ``size`` at a time in the order they were recorded (each
    batch read by id from where the last ended: never the whole run at once)."""
    r = responses.c
    last = 0
    while True:
        query = (
            select(r.id, r.scenario, r.input_id, r.role, r.candidate, r.temperature, r.run_index)
            .where(r.run_id == run_id, CURRENT_ONLY["responses"], r.kind == "candidate")
            .where(r.id > last)
            .order_by(r.id)
            .limit(size)
        )
        with db.read() as conn:
            batch = [
                (int(i), s, inp, role, c, None if t is None else float(t), int(n))
                for i, s, inp, role, c, t, n in conn.execute(query)
            ]
        if not batch:
            return
        yield batch
        last = batch[-1][0]


def run_evaluators(db: Database, run_id: str) -> list[str]:
    """The names of the evaluators with current records in the run, sorted (read from the
    run's unique index, without its records): what lets :func:`load_run_part` seek a
    part's records by index."""
    j = judgments.c
    query = (
        select(j.evaluator)
        .where(j.run_id == run_id, CURRENT_ONLY["judgments"])
        .distinct()
        .order_by(j.evaluator)
    )
    with db.read() as conn:
        return [str(name) for name in conn.execute(query).scalars()]


def run_stamp(db: Database, run_id: str) -> tuple[Any, ...] | None:
    """(status, finish time, sha256 of the metadata, then rows and highest id of the run's
    responses and of its evaluation records, superseded rows included), read from the
    runs row and the run's indexes; None when no run has exactly this id."""
    with db.read() as conn:
        head = conn.execute(
            select(runs.c.status, runs.c.finished_at, runs.c.metadata).where(runs.c.id == run_id)
        ).first()
        if head is None:
            return None
        meta = json.dumps(head.metadata, sort_keys=True, default=str).encode("utf-8")
        out: list[Any] = [head.status, str(head.finished_at), hashlib.sha256(meta).hexdigest()]
        for table in (responses, judgments):
            query = select(func.count(), func.max(table.c.id)).where(table.c.run_id == run_id)
            count, top = conn.execute(query).one()
            out += [int(count or 0), int(top or 0)]
    return tuple(out)


def _like(word: str) -> str:
    escaped = word.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def search_run(db: Database, run_id: str, word: str) -> set[int]:
    """The ids of the run's current responses whose text or error, stored input row, or
    one of whose current evaluation records' reasoning or unscored reason, contains
    ``word`` in any case.

    SQL ``LIKE`` where the database folds the word's case itself (``LIKE``: ASCII on SQLite;
    ``ILIKE``: any on PostgreSQL); otherwise the texts are read and compared here.
    """
    r, j = responses.c, judgments.c
    own = [r.run_id == run_id, CURRENT_ONLY["responses"]]
    judged = [j.run_id == run_id, CURRENT_ONLY["judgments"]]
    with db.read() as conn:
        postgres = conn.dialect.name == "postgresql"
        if word.isascii() or postgres:
            pattern = _like(word)

            def has(column: Any) -> Any:
                # SQLite's LIKE ignores ASCII case itself; PostgreSQL's ILIKE any case
                if postgres:
                    return column.ilike(pattern, escape="\\")
                return column.like(pattern, escape="\\")

            found = {
                int(i)
                for i in conn.execute(
                    select(r.id).where(*own, or_(has(r.text), has(r.error)))
                ).scalars()
            }
            keys = select(j.response_key).where(
                *judged, or_(has(j.reasoning), has(j.unscored_reason))
            )
            query = select(r.id).where(*own, r.key.in_(keys))
            found.update(int(i) for i in conn.execute(query).scalars())
            in_rows = select(input_rows.c.hash).where(has(input_rows.c.row_json))
            query = select(r.id).where(*own, r.input_hash.in_(in_rows))
            found.update(int(i) for i in conn.execute(query).scalars())
            return found
        folded = word.casefold()
        found = {
            int(i)
            for i, text, error in conn.execute(select(r.id, r.text, r.error).where(*own))
            if any(folded in t.casefold() for t in (text, error) if t)
        }
        hits = {
            str(key)
            for key, reasoning, unscored in conn.execute(
                select(j.response_key, j.reasoning, j.unscored_reason).where(*judged)
            )
            if any(folded in t.casefold() for t in (reasoning, unscored) if t)
        }
        if hits:
            for key, i in conn.execute(select(r.key, r.id).where(*own)):
                if key in hits:
                    found.add(int(i))
        joined = responses.join(input_rows, input_rows.c.hash == r.input_hash)
        for i, row_json in conn.execute(
            select(r.id, input_rows.c.row_json).select_from(joined).where(*own)
        ):
            text = json.dumps(json.loads(row_json), ensure_ascii=False)
            if folded in text.casefold():
                found.add(int(i))
        return found
