"""Initial schema: runs, responses, judgments, prompt versions, cache entries.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None


def _ts(name: str, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


# Longer than 80 lines on purpose: a migration is a frozen record of the schema it made,
# one statement per table and index in the order they are created; it is never edited
# once released, so splitting it would only scatter that record.
def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("suite_name", sa.String(255), nullable=False),
        sa.Column("suite_hash", sa.String(128), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        _ts("started_at"),
        _ts("finished_at", nullable=True),
        sa.Column("metadata", sa.Text, nullable=False),
    )
    op.create_table(
        "responses",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("key", sa.String(128), nullable=False),
        sa.Column("candidate", sa.String(255), nullable=False),
        sa.Column("role", sa.String(255), nullable=True),
        sa.Column("scenario", sa.String(255), nullable=False),
        sa.Column("input_id", sa.String(255), nullable=True),
        sa.Column("temperature", sa.Float, nullable=False),
        sa.Column("effective_temperature", sa.Float, nullable=True),
        sa.Column("run_index", sa.Integer, nullable=False),
        sa.Column("provider", sa.String(255), nullable=False),
        sa.Column("model", sa.String(255), nullable=False),
        sa.Column("text", sa.Text, nullable=True),
        sa.Column("finish_reason", sa.String(64), nullable=True),
        sa.Column("input_tokens", sa.Integer, nullable=True),
        sa.Column("output_tokens", sa.Integer, nullable=True),
        sa.Column("latency_s", sa.Float, nullable=True),
        sa.Column("cost_usd", sa.Float, nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("cached", sa.Boolean, nullable=False),
        sa.Column("prompt_versions", sa.Text, nullable=False),
        _ts("created_at"),
        sa.UniqueConstraint("run_id", "key", name="uq_responses_run_key"),
    )
    op.create_table(
        "judgments",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("response_key", sa.String(128), nullable=False),
        sa.Column("criterion", sa.String(255), nullable=False),
        sa.Column("judge_key", sa.String(128), nullable=False),
        sa.Column("judge_model", sa.String(255), nullable=False),
        sa.Column("threshold", sa.Float, nullable=False),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("passed", sa.Boolean, nullable=True),
        sa.Column("reasoning", sa.Text, nullable=True),
        sa.Column("unscored_reason", sa.Text, nullable=True),
        sa.Column("raw_text", sa.Text, nullable=True),
        sa.Column("input_tokens", sa.Integer, nullable=True),
        sa.Column("output_tokens", sa.Integer, nullable=True),
        sa.Column("latency_s", sa.Float, nullable=True),
        sa.Column("cost_usd", sa.Float, nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("cached", sa.Boolean, nullable=False),
        sa.Column("prompt_version", sa.Integer, nullable=True),
        _ts("created_at"),
        sa.UniqueConstraint(
            "run_id", "response_key", "criterion", name="uq_judgments_run_key_criterion"
        ),
    )
    op.create_table(
        "prompt_versions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        _ts("created_at"),
        sa.UniqueConstraint("name", "version", name="uq_prompt_versions_name_version"),
        sa.UniqueConstraint("name", "content_hash", name="uq_prompt_versions_name_hash"),
    )
    op.create_table(
        "cache_entries",
        sa.Column("key", sa.String(128), primary_key=True),
        sa.Column("kind", sa.String(64), nullable=False),
        sa.Column("provider", sa.String(255), nullable=False),
        sa.Column("model", sa.String(255), nullable=False),
        sa.Column("text", sa.Text, nullable=True),
        sa.Column("finish_reason", sa.String(64), nullable=True),
        sa.Column("input_tokens", sa.Integer, nullable=True),
        sa.Column("output_tokens", sa.Integer, nullable=True),
        sa.Column("effective_temperature", sa.Float, nullable=True),
        sa.Column("structured", sa.Text, nullable=True),
        _ts("created_at"),
        _ts("expires_at", nullable=True),
    )


def downgrade() -> None:
    for table in ("cache_entries", "prompt_versions", "judgments", "responses", "runs"):
        op.drop_table(table)
