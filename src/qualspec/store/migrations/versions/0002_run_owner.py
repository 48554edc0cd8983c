"""Run lock: which process (pid, host) executes a run, and its last heartbeat.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"


def upgrade() -> None:
    op.add_column("runs", sa.Column("owner_pid", sa.Integer, nullable=True))
    op.add_column("runs", sa.Column("owner_host", sa.String(255), nullable=True))
    op.add_column("runs", sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    for column in ("heartbeat_at", "owner_host", "owner_pid"):
        op.drop_column("runs", column)
