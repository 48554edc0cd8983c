"""Runs: create, update, finish, find by id prefix, list with counts and costs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sqlalchemy import case, delete, func, select, text, update

from qualspec.errors import StoreError, UnknownRunError
from qualspec.store._clock import now_utc
from qualspec.store._db import Database
from qualspec.store._input_rows import drop_unused_rows, run_row_hashes
from qualspec.store._prefix import only_match
from qualspec.store._records import RunSummary, suite_matches
from qualspec.store._redact import redact
from qualspec.store._schema import judgments, labels, responses, runs
from qualspec.store._shared import MAX_ID_LENGTH, UNFINISHED, new_run_row, summary
from qualspec.store._shared import RUN_LIST_HINT as _LIST_HINT

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

__all__ = [
    "UNFINISHED",
    "create_run",
    "delete_run",
    "finish_run",
    "get_run",
    "latest_unfinished_run",
    "list_runs",
    "resolve_run_id",
    "update_run_metadata",
]


def create_run(db: Database, suite_name: str, suite_hash: str, metadata: Mapping[str, Any]) -> str:
    """Insert a run with status ``running`` and return its id."""
    row = new_run_row(suite_name, suite_hash, metadata)
    with db.write() as conn:
        conn.execute(runs.insert().values(**row))
    return str(row["id"])


def update_run_metadata(db: Database, run_id: str, patch: Mapping[str, Any]) -> None:
    """Merge ``patch`` into the run's metadata (top-level keys replace)."""
    with db.write() as conn:
        query = select(runs.c.metadata).where(runs.c.id == run_id)
        if conn.dialect.name == "postgresql":
            query = query.with_for_update()
        current = conn.execute(query).scalar_one_or_none()
        if current is None:
            raise StoreError(f"no run with id '{run_id}': {_LIST_HINT}")
        merged = {**current, **redact(dict(patch))}
        conn.execute(update(runs).where(runs.c.id == run_id).values(metadata=merged))


def finish_run(db: Database, run_id: str, status: str) -> None:
    """Set the run's final (or interrupted) status and its finish time."""
    with db.write() as conn:
        result = conn.execute(
            update(runs).where(runs.c.id == run_id).values(status=status, finished_at=now_utc())
        )
    if result.rowcount == 0:
        raise StoreError(f"no run with id '{run_id}': {_LIST_HINT}")


def resolve_run_id(db: Database, run_id: str) -> str:
    """The full id of the one run whose id is ``run_id`` or starts with it."""
    if len(run_id) > MAX_ID_LENGTH:  # no id is that long (and SQLite refuses such a LIKE)
        raise UnknownRunError(
            f"no run with an id of {len(run_id)} characters ('{run_id[:40]}...'): {_LIST_HINT}"
        )
    with db.read() as conn:
        if conn.execute(select(runs.c.id).where(runs.c.id == run_id)).first() is not None:
            return run_id
        found = (
            conn.execute(
                select(runs.c.id)
                .where(runs.c.id.startswith(run_id, autoescape=True))
                .order_by(runs.c.id)
                .limit(6)
            )
            .scalars()
            .all()
        )
    return only_match(
        run_id,
        [str(i) for i in found],
        error=UnknownRunError,
        noun="run",
        kind="run",
        plural="runs",
        hint=_LIST_HINT,
    )


def get_run(db: Database, run_id: str) -> RunSummary:
    """The run whose id is ``run_id`` or uniquely starts with it."""
    full = resolve_run_id(db, run_id)
    return _summaries(db, select(runs).where(runs.c.id == full))[0]


def list_runs(
    db: Database,
    suite_name: str | None = None,
    limit: int = 50,
    *,
    exclude_suite: str | None = None,
) -> list[RunSummary]:
    """Runs, newest first, with their counts and costs (but those of ``exclude_suite``)."""
    query = select(runs).order_by(runs.c.started_at.desc(), runs.c.id.desc()).limit(limit)
    if suite_name is not None:
        query = query.where(runs.c.suite_name == suite_name)
    if exclude_suite is not None:
        query = query.where(runs.c.suite_name != exclude_suite)
    return _summaries(db, query)


def latest_unfinished_run(
    db: Database,
    suite_name: str,
    suite_path: str | None = None,
    suite_hash: str | None = None,
) -> str | None:
    """The newest run of a suite that is running, interrupted, failed or over budget.

    The suite is ``suite_name`` and, when given, its file or content (see
    ``RunSummary.is_of_suite``): a run of another file with the same name is skipped.
    """
    with db.read() as conn:
        for row in conn.execute(unfinished_query(suite_name)):
            if suite_matches(
                suite_name, row.suite_hash, row.metadata, suite_name, suite_path, suite_hash
            ):
                return str(row.id)
    return None


def unfinished_query(suite_name: Any) -> Any:
    """The id, hash and metadata of a suite's unfinished runs, newest first."""
    return (
        select(runs.c.id, runs.c.suite_hash, runs.c.metadata)
        .where(runs.c.suite_name == suite_name, runs.c.status.in_(UNFINISHED))
        .order_by(runs.c.started_at.desc(), runs.c.id.desc())
    )


def delete_run(db: Database, run_id: str) -> None:
    """Delete a run with its responses, judgments and labels, and the input rows no other run's
    responses name."""
    full = resolve_run_id(db, run_id)
    with db.write() as conn:
        if conn.dialect.name == "postgresql":
            # a writer stores a row before the responses naming it, in one transaction:
            # this waits for writers under way, so no row they still need is dropped
            conn.execute(text("LOCK TABLE input_rows IN SHARE ROW EXCLUSIVE MODE"))
        hashes = run_row_hashes(conn, full)
        conn.execute(delete(labels).where(labels.c.run_id == full))
        conn.execute(delete(judgments).where(judgments.c.run_id == full))
        conn.execute(delete(responses).where(responses.c.run_id == full))
        conn.execute(delete(runs).where(runs.c.id == full))
        drop_unused_rows(conn, hashes)


def _spent(table: Any) -> Any:
    return func.coalesce(func.sum(case((table.c.cached, 0.0), else_=table.c.cost_usd)), 0.0)


def _unpriced(table: Any, *also: Any) -> Any:
    """Calls that answered, were not cached and have no cost: their price is unknown."""
    c = table.c
    cond = c.error.is_(None) & c.cost_usd.is_(None) & ~c.cached
    for extra in also:
        cond = cond & extra
    return func.sum(case((cond, 1), else_=0))


def _summaries(db: Database, query: Any) -> list[RunSummary]:
    # counts and costs are those of the current rows: superseded ones are not counted
    with db.read() as conn:
        rows = conn.execute(query).mappings().all()
        ids = [row["id"] for row in rows]
        if not ids:
            return []
        resp = _response_totals(conn, ids)
        judg = _judgment_totals(conn, ids)
    return [summary(row, resp.get(row["id"]), judg.get(row["id"])) for row in rows]


def _response_totals(conn: Connection, ids: list[str]) -> dict[str, Any]:
    """Per run: its current responses' count, errors, cached answers and cost."""
    return {row.run_id: row for row in conn.execute(response_totals_query(ids))}


def response_totals_query(ids: Any) -> Any:
    """Per run among ``ids``: its current responses' count, errors, cached answers and
    cost (``n``, ``errors``, ``cached``, ``cost``, ``unpriced``)."""
    r = responses.c
    return (
        select(
            r.run_id,
            func.count().label("n"),
            func.sum(case((r.error.is_not(None), 1), else_=0)).label("errors"),
            func.sum(case((r.cached, 1), else_=0)).label("cached"),
            _spent(responses).label("cost"),
            _unpriced(responses).label("unpriced"),
        )
        .where(r.run_id.in_(ids), ~r.superseded)
        .group_by(r.run_id)
    )


def _judgment_totals(conn: Connection, ids: list[str]) -> dict[str, Any]:
    """Per run: its current judgments' count, errors, unscored, cached ones and cost."""
    return {row.run_id: row for row in conn.execute(judgment_totals_query(ids))}


def judgment_totals_query(ids: Any) -> Any:
    """Per run among ``ids``: its current judgments' count, errors, unscored, cached ones
    and cost (``n``, ``errors``, ``unscored``, ``cached``, ``cost``, ``unpriced``)."""
    j = judgments.c
    # unscored: a final record with neither a score nor per-subject/field scores
    unscored = case((j.score.is_(None) & j.scores.is_(None) & j.error.is_(None), 1), else_=0)
    return (
        select(
            j.run_id,
            func.count().label("n"),
            func.sum(case((j.error.is_not(None), 1), else_=0)).label("errors"),
            func.sum(unscored).label("unscored"),
            func.sum(case((j.cached, 1), else_=0)).label("cached"),
            _spent(judgments).label("cost"),
            # a record decided without a call (no judge key) has no price to know
            _unpriced(judgments, j.judge_model.is_not(None), j.judge_key != "").label("unpriced"),
        )
        .where(j.run_id.in_(ids), ~j.superseded)
        .group_by(j.run_id)
    )
