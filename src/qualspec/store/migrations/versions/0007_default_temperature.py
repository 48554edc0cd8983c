"""Responses without a temperature.

Revision ID: 0007
Revises: 0006

A suite without ``temperatures:`` sends no temperature: each provider answers at its own
default, reported as "default". ``responses.temperature`` becomes nullable; NULL means
that no temperature was sent (``effective_temperature`` then holds the provider's
default when it is known, as for the embedded model, else NULL).

Downgrade deletes the responses without a temperature, and their judgments: revision
0006's NOT NULL column cannot hold them, and any number put there instead would claim a
temperature that was never sent.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"


def upgrade() -> None:
    with op.batch_alter_table("responses") as batch:
        batch.alter_column("temperature", existing_type=sa.Float, nullable=True)


def downgrade() -> None:
    responses = sa.table(
        "responses",
        sa.column("run_id", sa.String),
        sa.column("key", sa.String),
        sa.column("temperature", sa.Float),
    )
    judgments = sa.table(
        "judgments", sa.column("run_id", sa.String), sa.column("response_key", sa.String)
    )
    without = (
        sa.select(responses.c.key)
        .where(
            responses.c.temperature.is_(None),
            responses.c.run_id == judgments.c.run_id,
            responses.c.key == judgments.c.response_key,
        )
        .exists()
    )
    op.execute(sa.delete(judgments).where(without))
    op.execute(sa.delete(responses).where(responses.c.temperature.is_(None)))
    with op.batch_alter_table("responses") as batch:
        batch.alter_column("temperature", existing_type=sa.Float, nullable=False)
