"""Indexes for history and cache maintenance: runs by suite, cache by kind and expiry.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"


def upgrade() -> None:
    op.create_index("ix_runs_suite_started", "runs", ["suite_name", "started_at"])
    op.create_index("ix_cache_entries_kind", "cache_entries", ["kind"])
    op.create_index("ix_cache_entries_expires_at", "cache_entries", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_cache_entries_expires_at", table_name="cache_entries")
    op.drop_index("ix_cache_entries_kind", table_name="cache_entries")
    op.drop_index("ix_runs_suite_started", table_name="runs")
