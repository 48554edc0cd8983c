"""Superseded rows: what a resumed run's current plan no longer asks for.

Revision ID: 0005
Revises: 0004

A run resumed after its suite changed (fewer runs per temperature, a deleted criterion,
another judge) keeps the rows it recorded before, marked ``superseded``; reports, exports
and diffs count only the current ones.

* ``responses.superseded`` and ``judgments.superseded``: booleans, false for existing
  rows.
* The unique keys hold among current rows only: ``(run_id, key)`` of responses and
  ``(run_id, evaluator, response_key, criterion_hash)`` of judgments become unique
  indexes with ``WHERE superseded = false`` (partial indexes, on SQLite and PostgreSQL
  alike, and the same columns and predicate in ``INSERT .. ON CONFLICT``). A superseded
  judgment of the old judge and the current one of the new judge, for the same response
  and criterion, are then both kept.
* ``ix_responses_run`` and ``ix_judgments_run`` (``run_id``): reading or deleting a whole
  run, superseded rows included, no longer has the unique key to use.

SQLite cannot drop a unique constraint in place, so ``responses`` and ``judgments`` are
rebuilt (``batch_alter_table``); no table references them, so nothing cascades.

Downgrade deletes the superseded rows (revision 0004's unique constraints cannot hold
them), then restores the constraints.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"

# (table, old unique constraint, new partial unique index, its columns)
_KEYS = (
    ("responses", "uq_responses_run_key", "uq_responses_run_key_current", ["run_id", "key"]),
    (
        "judgments",
        "uq_judgments_run_evaluator_key_criterion",
        "uq_judgments_run_evaluator_key_criterion_current",
        ["run_id", "evaluator", "response_key", "criterion_hash"],
    ),
)


def _current() -> sa.ColumnElement[bool]:
    # the same expression as qualspec.store._schema's index predicates, kept here so that
    # this migration never changes with the application code
    return sa.column("superseded", sa.Boolean) == sa.false()


def upgrade() -> None:
    for table, old, new, columns in _KEYS:
        with op.batch_alter_table(table) as batch:
            batch.add_column(
                sa.Column("superseded", sa.Boolean, nullable=False, server_default=sa.false())
            )
            batch.drop_constraint(old, type_="unique")
        op.create_index(
            new,
            table,
            columns,
            unique=True,
            sqlite_where=_current(),
            postgresql_where=_current(),
        )
        op.create_index(f"ix_{table}_run", table, ["run_id"])


def downgrade() -> None:
    for table, old, new, columns in reversed(_KEYS):
        t = sa.table(table, sa.column("superseded", sa.Boolean))
        op.execute(sa.delete(t).where(t.c.superseded == sa.true()))
        op.drop_index(f"ix_{table}_run", table_name=table)
        op.drop_index(new, table_name=table)
        with op.batch_alter_table(table) as batch:
            batch.drop_column("superseded")
            batch.create_unique_constraint(old, columns)
