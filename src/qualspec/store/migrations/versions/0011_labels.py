"""Human labels: people's scores and pass/fail of a run's answers, per criterion.

Revision ID: 0011
Revises: 0010

``labels`` holds one row per (run, response key, criterion, labeller): the person's score
(0-10) and/or pass/fail, optional notes, who imported it (``imported_by``), when
(``imported_at``) and from which file (``source_name``, ``source_sha256``). The criterion
enters the unique key as its SHA-256 (``criterion_hash``), as in ``judgments``; a label
without a named labeller has ``labeller`` ''.

Downgrade drops the table: the imported labels are lost (import the files again).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"


def upgrade() -> None:
    op.create_table(
        "labels",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "run_id",
            sa.String(64),
            sa.ForeignKey("runs.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("response_key", sa.String(128), nullable=False),
        sa.Column("criterion", sa.Text, nullable=False),
        sa.Column("criterion_hash", sa.String(64), nullable=False),
        sa.Column("labeller", sa.String(255), nullable=False, server_default=""),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("passed", sa.Boolean, nullable=True),
        sa.Column("notes", sa.Text, nullable=True),
        sa.Column("imported_by", sa.Text, nullable=False),
        sa.Column("imported_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("source_name", sa.Text, nullable=False),
        sa.Column("source_sha256", sa.String(64), nullable=False),
        sa.UniqueConstraint(
            "run_id",
            "response_key",
            "criterion_hash",
            "labeller",
            name="uq_labels_run_key_criterion_labeller",
        ),
    )


def downgrade() -> None:
    op.drop_table("labels")
