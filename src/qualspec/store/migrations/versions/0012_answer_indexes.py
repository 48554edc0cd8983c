"""Fewer random-key indexes on the answers: what a large run pays at every row.

Revision ID: 0012
Revises: 0011

``ix_responses_call_key`` becomes a partial index of the reference answers only
(``kind = 'reference'``): every query that looks answers up by their call key asks for
reference answers (the reference review, a run's references), and the answers of the
candidates, which are nearly all the rows of a large run, no longer enter it.

``ix_responses_input_hash`` is dropped. Its one use was deleting a run: which input rows
no other answer names any more. That is now one pass over the answers' input hashes at
the deletion, instead of an index that every answer of every run wrote one random key
into (see docs/performance/cached-rerun.md).

Downgrade builds both indexes as they were; no data is lost either way.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"


def _references() -> sa.ColumnElement[bool]:
    # the same predicate as qualspec.store._schema's, kept here so that this migration
    # never changes with the application code
    return sa.column("kind", sa.String) == sa.literal_column("'reference'")


def upgrade() -> None:
    op.drop_index("ix_responses_input_hash", table_name="responses")
    op.drop_index("ix_responses_call_key", table_name="responses")
    op.create_index(
        "ix_responses_call_key",
        "responses",
        ["call_key"],
        sqlite_where=_references(),
        postgresql_where=_references(),
    )


def downgrade() -> None:
    op.drop_index("ix_responses_call_key", table_name="responses")
    op.create_index("ix_responses_call_key", "responses", ["call_key"])
    op.create_index("ix_responses_input_hash", "responses", ["input_hash"])
