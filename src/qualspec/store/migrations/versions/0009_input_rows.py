"""Input rows: the values each answer was asked with, stored once per row.

Revision ID: 0009
Revises: 0008

* ``input_rows`` holds each input row's values once: ``hash`` (SHA-256 of ``row_json``,
  hex) and ``row_json`` (the row's values as compact JSON with sorted keys, secret-looking
  text masked), written with INSERT-if-absent in the transaction of the responses that
  use it.
* ``responses.input_hash`` names the row a response was asked with. Rows written before
  this revision have none (NULL): their pages say the row was not stored.

Downgrade drops the table and the column: the stored rows are lost (the answers stay).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"


def upgrade() -> None:
    op.create_table(
        "input_rows",
        sa.Column("hash", sa.String(64), primary_key=True),
        sa.Column("row_json", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    with op.batch_alter_table("responses") as batch:
        batch.add_column(sa.Column("input_hash", sa.String(64), nullable=True))
        batch.create_index("ix_responses_input_hash", ["input_hash"])


def downgrade() -> None:
    with op.batch_alter_table("responses") as batch:
        batch.drop_index("ix_responses_input_hash")
        batch.drop_column("input_hash")
    op.drop_table("input_rows")
