"""Which replica served each response.

Revision ID: 0010
Revises: 0009

``responses.served_by`` is the base URL of the replica that answered the call, for a
provider that lists several replicas (``base_urls``); NULL for a provider with one server,
an answer from the cache, and rows written before this revision.

Downgrade drops the column: which replica served each call is lost.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"


def upgrade() -> None:
    with op.batch_alter_table("responses") as batch:
        batch.add_column(sa.Column("served_by", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("responses") as batch:
        batch.drop_column("served_by")
