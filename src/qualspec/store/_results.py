"""Responses and judgments: idempotent batch upserts and reads.

Upsert rule (per unique key): a new row is inserted; an existing error row is replaced
by whatever comes later; an existing success (scored, unscored or text) is kept.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import fields
from typing import Any, TypeVar

from sqlalchemy import select

from qualspec.errors import StoreError
from qualspec.store._db import Database
from qualspec.store._records import JudgmentRecord, ResponseRecord
from qualspec.store._runs import now_utc
from qualspec.store._schema import judgments, responses, runs

__all__ = [
    "judgment_keys",
    "load_judgments",
    "load_responses",
    "record_judgments",
    "record_responses",
    "response_keys",
]

_R = TypeVar("_R", ResponseRecord, JudgmentRecord)
_RESPONSE_FIELDS = tuple(f.name for f in fields(ResponseRecord))
_JUDGMENT_FIELDS = tuple(f.name for f in fields(JudgmentRecord))
_STATEMENTS: dict[tuple[str, str], Any] = {}


def _upsert(db: Database, table: Any, conflict: tuple[str, ...]) -> Any:
    cache_key = (db.dialect, table.name)
    stmt = _STATEMENTS.get(cache_key)
    if stmt is None:
        ins = db.insert(table)
        skip = {"id", *conflict}
        stmt = ins.on_conflict_do_update(
            index_elements=list(conflict),
            set_={c.name: ins.excluded[c.name] for c in table.c if c.name not in skip},
            where=table.c.error.is_not(None),
        )
        _STATEMENTS[cache_key] = stmt
    return stmt


def _dedupe(records: Sequence[_R], key: Callable[[_R], Hashable]) -> list[_R]:
    """Apply the upsert rule within one batch (a batch may not touch a row twice)."""
    chosen: dict[Hashable, _R] = {}
    for rec in records:
        k = key(rec)
        prev = chosen.get(k)
        if prev is None or prev.error is not None:
            chosen[k] = rec
    return list(chosen.values())


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
    """Upsert a batch of responses in one transaction."""
    if not records:
        return
    now = now_utc()
    rows = []
    for rec in _dedupe(records, lambda r: r.key):
        row = {name: getattr(rec, name) for name in _RESPONSE_FIELDS}
        row["run_id"] = run_id
        row["prompt_versions"] = dict(rec.prompt_versions)
        row["created_at"] = rec.created_at or now
        rows.append(row)
    with _run_must_exist(db, run_id), db.write() as conn:
        conn.execute(_upsert(db, responses, ("run_id", "key")), rows)


def record_judgments(db: Database, run_id: str, records: Sequence[JudgmentRecord]) -> None:
    """Upsert a batch of judgments in one transaction."""
    if not records:
        return
    now = now_utc()
    rows = []
    for rec in _dedupe(records, lambda r: (r.response_key, r.criterion)):
        row = {name: getattr(rec, name) for name in _JUDGMENT_FIELDS}
        row["run_id"] = run_id
        row["created_at"] = rec.created_at or now
        rows.append(row)
    with _run_must_exist(db, run_id), db.write() as conn:
        conn.execute(_upsert(db, judgments, ("run_id", "response_key", "criterion")), rows)


def response_keys(db: Database, run_id: str, ok_only: bool = True) -> set[str]:
    """Keys of the responses recorded for a run (only successes when ``ok_only``)."""
    query = select(responses.c.key).where(responses.c.run_id == run_id)
    if ok_only:
        query = query.where(responses.c.error.is_(None))
    with db.read() as conn:
        return set(conn.execute(query).scalars())


def judgment_keys(db: Database, run_id: str) -> set[tuple[str, str]]:
    """(response_key, criterion) of the final judgments (scored or unscored, not errors)."""
    query = select(judgments.c.response_key, judgments.c.criterion).where(
        judgments.c.run_id == run_id, judgments.c.error.is_(None)
    )
    with db.read() as conn:
        return {(str(a), str(b)) for a, b in conn.execute(query)}


def _response_order(rec: ResponseRecord) -> tuple[Any, ...]:
    # sorted in Python so that SQLite and PostgreSQL (collations, NULL order) agree
    return (
        rec.scenario,
        rec.input_id is not None,
        rec.input_id or "",
        rec.role is not None,
        rec.role or "",
        rec.candidate,
        rec.temperature,
        rec.run_index,
        rec.key,
    )


def load_responses(db: Database, run_id: str) -> list[ResponseRecord]:
    """A run's responses, ordered by scenario, input, role, candidate, temperature, run."""
    with db.read() as conn:
        rows = conn.execute(select(responses).where(responses.c.run_id == run_id)).mappings()
        out = [
            ResponseRecord(**{name: row[name] for name in _RESPONSE_FIELDS}) for row in rows.all()
        ]
    out.sort(key=_response_order)
    return out


def load_judgments(
    db: Database, run_id: str, ordered: Sequence[ResponseRecord]
) -> list[JudgmentRecord]:
    """A run's judgments in the order of their responses (``ordered``), then criterion."""
    with db.read() as conn:
        rows = conn.execute(select(judgments).where(judgments.c.run_id == run_id)).mappings()
        out = [
            JudgmentRecord(**{name: row[name] for name in _JUDGMENT_FIELDS}) for row in rows.all()
        ]
    position = {rec.key: i for i, rec in enumerate(ordered)}
    out.sort(
        key=lambda j: (position.get(j.response_key, len(position)), j.response_key, j.criterion)
    )
    return out
