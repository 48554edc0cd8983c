"""Queue wait beside service time.

Revision ID: 0006
Revises: 0005

``latency_s`` of responses and judgments is the time the provider took to answer (the
service time, summed over attempts). The time a call waited for a concurrency slot (its
endpoint's limit, or the embedded model's single thread) is recorded apart, as
``queue_s``; rows written before this revision have none (NULL).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"

_TABLES = ("responses", "judgments")


def upgrade() -> None:
    for table in _TABLES:
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("queue_s", sa.Float, nullable=True))


def downgrade() -> None:
    for table in _TABLES:
        with op.batch_alter_table(table) as batch:
            batch.drop_column("queue_s")
