"""Evaluations: any kind of response, any evaluator's records, unbounded user text.

Revision ID: 0004
Revises: 0003

* ``responses.kind`` says what made the call (``candidate``, ``reference``, ``adhoc``,
  ...); existing rows become ``candidate``.
* ``judgments`` becomes the general evaluation record: ``evaluator`` (existing rows:
  ``criteria``), ``subject`` (the response keys of a group subject), ``scores`` and
  ``details`` (JSON text); ``judge_model`` and ``threshold`` become optional.
* User text (suite, candidate, role, scenario, input, provider and model names, prompt
  names, criteria) becomes unbounded ``Text``.

Long criteria and the unique key. A criterion is free text that may run to paragraphs,
but PostgreSQL refuses a btree index entry above ~2,700 bytes (a third of a page, after
compression), so a unique constraint on the criterion text itself would make the insert
of a long, varied criterion fail. The key is therefore ``(run_id, evaluator,
response_key, criterion_hash)``, where ``criterion_hash`` is SHA-256 of the criterion's
UTF-8 bytes in hex (64 characters), computed by the store code when it writes a row and
by this migration for existing rows. It is a plain column and a plain unique
constraint, so both backends behave the same and ``INSERT .. ON CONFLICT`` names the
same columns on both (an expression index on ``md5(criterion)`` would exist on
PostgreSQL only). The other key parts are bounded (``run_id``, ``response_key``) or short
names chosen in the suite (``evaluator``).

SQLite cannot ALTER a column's type, so the tables are rebuilt (``batch_alter_table``).
The migration runs inside one transaction with foreign keys on, where SQLite ignores
``PRAGMA foreign_keys``: rebuilding ``runs`` drops the old table, and that drop would
cascade to every response and judgment. Their rows are therefore set aside in plain
copies while ``runs`` is rebuilt, and put back afterwards.

Downgrade keeps what revision 0003 can hold: it deletes judgments of other evaluators
than ``criteria``, those without a judge model or threshold and those whose criterion
is longer than 255 characters; responses whose kind is not ``candidate``; prompt
versions whose name, and cache entries whose provider or model, is longer than 255
characters. Other text longer than 255 characters is cut to 255.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"

_OLD_UNIQUE = "uq_judgments_run_key_criterion"
_NEW_UNIQUE = "uq_judgments_run_evaluator_key_criterion"
_OLD_TEXT = sa.String(255)

# (table, column, nullable) of user text that becomes unbounded (judgments apart)
_TEXT_COLUMNS: dict[str, tuple[tuple[str, bool], ...]] = {
    "runs": (("suite_name", False),),
    "responses": (
        ("candidate", False),
        ("role", True),
        ("scenario", False),
        ("input_id", True),
        ("model", False),
        ("provider", False),
    ),
    "prompt_versions": (("name", False),),
    "cache_entries": (("provider", False), ("model", False)),
}
_CHILDREN = ("judgments", "responses")  # the tables whose rows reference runs


def _criterion_hash(criterion: str) -> str:
    # the same function as qualspec.store._results.criterion_hash (kept here so that
    # this migration never changes with the application code)
    return hashlib.sha256(criterion.encode("utf-8")).hexdigest()


def _retype(batch: Any, table: str, *, to_text: bool) -> None:
    new, old = (sa.Text(), _OLD_TEXT) if to_text else (_OLD_TEXT, sa.Text())
    for column, nullable in _TEXT_COLUMNS[table]:
        batch.alter_column(column, type_=new, existing_type=old, existing_nullable=nullable)


@contextmanager
def _runs_children_set_aside() -> Iterator[None]:
    """SQLite: move the rows of the tables that reference ``runs`` aside, then back."""
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        yield
        return
    for table in _CHILDREN:
        op.execute(f"CREATE TABLE _qs_aside_{table} AS SELECT * FROM {table}")
        op.execute(f"DELETE FROM {table}")
    yield
    for table in reversed(_CHILDREN):
        names = [c["name"] for c in sa.inspect(bind).get_columns(f"_qs_aside_{table}")]
        columns = ", ".join(f'"{name}"' for name in names)
        op.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM _qs_aside_{table}")
        op.execute(f"DROP TABLE _qs_aside_{table}")


def _fill_criterion_hash() -> None:
    """Hash every distinct criterion of the existing judgments."""
    bind = op.get_bind()
    j = sa.table("judgments", sa.column("criterion", sa.Text), sa.column("criterion_hash"))
    criteria = (
        bind.execute(sa.select(j.c.criterion).where(j.c.criterion_hash.is_(None)).distinct())
        .scalars()
        .all()
    )
    if criteria:
        bind.execute(
            sa.update(j)
            .where(j.c.criterion == sa.bindparam("b_criterion"))
            .values(criterion_hash=sa.bindparam("b_hash")),
            [{"b_criterion": c, "b_hash": _criterion_hash(c)} for c in criteria],
        )


def upgrade() -> None:
    with _runs_children_set_aside(), op.batch_alter_table("runs") as batch:
        _retype(batch, "runs", to_text=True)
    for table in ("prompt_versions", "cache_entries"):
        with op.batch_alter_table(table) as batch:
            _retype(batch, table, to_text=True)
    with op.batch_alter_table("responses") as batch:
        batch.add_column(
            sa.Column("kind", sa.String(32), nullable=False, server_default="candidate")
        )
        _retype(batch, "responses", to_text=True)

    op.add_column(
        "judgments", sa.Column("evaluator", sa.Text, nullable=False, server_default="criteria")
    )
    for name in ("subject", "scores", "details"):
        op.add_column("judgments", sa.Column(name, sa.Text, nullable=True))
    op.add_column("judgments", sa.Column("criterion_hash", sa.String(64), nullable=True))
    _fill_criterion_hash()
    with op.batch_alter_table("judgments") as batch:
        batch.drop_constraint(_OLD_UNIQUE, type_="unique")
        batch.alter_column(
            "criterion_hash", existing_type=sa.String(64), existing_nullable=True, nullable=False
        )
        batch.alter_column(
            "criterion", type_=sa.Text(), existing_type=_OLD_TEXT, existing_nullable=False
        )
        batch.alter_column(
            "judge_model",
            type_=sa.Text(),
            existing_type=_OLD_TEXT,
            existing_nullable=False,
            nullable=True,
        )
        batch.alter_column(
            "threshold", existing_type=sa.Float, existing_nullable=False, nullable=True
        )
        batch.create_unique_constraint(
            _NEW_UNIQUE, ["run_id", "evaluator", "response_key", "criterion_hash"]
        )


def _drop_what_0003_cannot_hold() -> None:
    def too_long(column: Any) -> Any:
        return sa.func.length(column) > 255

    j = sa.table(
        "judgments",
        sa.column("evaluator"),
        sa.column("judge_model"),
        sa.column("threshold"),
        sa.column("criterion"),
    )
    op.execute(
        sa.delete(j).where(
            sa.or_(
                j.c.evaluator != "criteria",
                j.c.judge_model.is_(None),
                j.c.threshold.is_(None),
                too_long(j.c.criterion),
            )
        )
    )
    r = sa.table("responses", sa.column("kind"))
    op.execute(sa.delete(r).where(r.c.kind != "candidate"))
    pv = sa.table("prompt_versions", sa.column("name"))
    op.execute(sa.delete(pv).where(too_long(pv.c.name)))
    ce = sa.table("cache_entries", sa.column("provider"), sa.column("model"))
    op.execute(sa.delete(ce).where(sa.or_(too_long(ce.c.provider), too_long(ce.c.model))))
    cut = [(t, c) for t in ("runs", "responses") for c, _nullable in _TEXT_COLUMNS[t]]
    for table, column in [*cut, ("judgments", "judge_model")]:
        t = sa.table(table, sa.column(column))
        op.execute(
            sa.update(t)
            .where(too_long(t.c[column]))
            .values({column: sa.func.substr(t.c[column], 1, 255)})
        )


def downgrade() -> None:
    _drop_what_0003_cannot_hold()
    with op.batch_alter_table("judgments") as batch:
        batch.drop_constraint(_NEW_UNIQUE, type_="unique")
        for name in ("criterion_hash", "details", "scores", "subject", "evaluator"):
            batch.drop_column(name)
        batch.alter_column(
            "criterion", type_=_OLD_TEXT, existing_type=sa.Text(), existing_nullable=False
        )
        batch.alter_column(
            "judge_model",
            type_=_OLD_TEXT,
            existing_type=sa.Text(),
            existing_nullable=True,
            nullable=False,
        )
        batch.alter_column(
            "threshold", existing_type=sa.Float, existing_nullable=True, nullable=False
        )
        batch.create_unique_constraint(_OLD_UNIQUE, ["run_id", "response_key", "criterion"])
    with op.batch_alter_table("responses") as batch:
        batch.drop_column("kind")
        _retype(batch, "responses", to_text=False)
    for table in ("prompt_versions", "cache_entries"):
        with op.batch_alter_table(table) as batch:
            _retype(batch, table, to_text=False)
    with _runs_children_set_aside(), op.batch_alter_table("runs") as batch:
        _retype(batch, "runs", to_text=False)
