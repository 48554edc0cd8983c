"""Reference review: the ground-truth status of reference answers, overrides, audit trail.

Revision ID: 0008
Revises: 0007

* ``responses.call_key`` is the call's cache key (what the cache stores its answer
  under, shared across runs); rows written before this revision have none (NULL). A
  reference answer is reviewed under it: the same reference, reused from the cache by
  later runs, keeps its review.
* ``reference_reviews`` holds one row per reviewed reference answer (by call key):
  ``ground_truth_status`` (``unvalidated``, ``validated``, ``needs_review``,
  ``disputed``), ``human_validated_at``, ``validation_notes`` and ``override_text`` (the
  answer a person wrote in its place), and ``reviewed_answer_sha256``, the SHA-256 of the
  model's answer the status was given to (a reference regenerated after its cache expired
  may answer differently: the status then no longer applies). A reference without a row
  is ``unvalidated``.
* ``reference_audit`` is the append-only trail of every change: who, when, what
  (``validate``, ``dispute``, ``needs_review``, ``override``), the value before and
  after, and the notes.

Downgrade drops both tables and the column: reviews and overrides are lost.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"


def upgrade() -> None:
    with op.batch_alter_table("responses") as batch:
        batch.add_column(sa.Column("call_key", sa.String(128), nullable=True))
        batch.create_index("ix_responses_call_key", ["call_key"])
    op.create_table(
        "reference_reviews",
        sa.Column("call_key", sa.String(128), primary_key=True),
        sa.Column(
            "ground_truth_status", sa.String(32), nullable=False, server_default="unvalidated"
        ),
        sa.Column("human_validated_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("validation_notes", sa.Text, nullable=True),
        sa.Column("override_text", sa.Text, nullable=True),
        sa.Column("reviewed_answer_sha256", sa.String(64), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "reference_audit",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("call_key", sa.String(128), nullable=False),
        sa.Column("who", sa.Text, nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("before", sa.Text, nullable=True),
        sa.Column("after", sa.Text, nullable=True),
        sa.Column("notes", sa.Text, nullable=True),
        sa.Index("ix_reference_audit_call_key", "call_key"),
    )


def downgrade() -> None:
    op.drop_table("reference_audit")
    op.drop_table("reference_reviews")
    with op.batch_alter_table("responses") as batch:
        batch.drop_index("ix_responses_call_key")
        batch.drop_column("call_key")
