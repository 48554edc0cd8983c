"""The tables, as SQLAlchemy Core objects (the migrations create exactly these).

Timestamps are timezone-aware UTC in Python. SQLite stores them as naive UTC text
(sortable); PostgreSQL as ``timestamptz``. JSON values are stored as text so that both
backends hold the same bytes.
"""

from __future__ import annotations

import json
import typing
from datetime import UTC, datetime
from types import NoneType, UnionType
from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
    literal_column,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.types import TypeDecorator

from qualspec.store._shared import JSON_ENCODER as _JSON
from qualspec.store._usage import USAGE_FIELDS, Usage

__all__ = [
    "CURRENT_ONLY",
    "JSONText",
    "UTCDateTime",
    "cache_entries",
    "input_rows",
    "judgments",
    "labels",
    "metadata",
    "prompt_versions",
    "reference_audit",
    "reference_reviews",
    "responses",
    "runs",
    "usage_columns",
    "use_dialect",
]


class UTCDateTime(TypeDecorator[datetime]):
    """A datetime that goes in and comes out timezone-aware UTC on every backend."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        if dialect.name == "sqlite":
            return value.replace(tzinfo=None)
        return value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class JSONText(TypeDecorator[Any]):
    """Any JSON-serialisable value, stored as compact text."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> str | None:
        if value is None:
            return None
        return _JSON.encode(value)  # json.dumps with these options (one encoder, not one per row)

    def process_result_value(self, value: str | None, dialect: Dialect) -> Any:
        return None if value is None else json.loads(value)


_SQL_TYPES: dict[type, Any] = {int: Integer, float: Float, str: Text, bool: Boolean}


def usage_columns(*names: str) -> list[Column[Any]]:
    """New columns for the call-accounting fields ``names`` (:class:`Usage`'s, where they
    are declared once): the SQL type and nullability come from the field's type
    (``int | None`` is a nullable ``INTEGER``, ``bool`` a ``BOOLEAN`` that is not)."""
    hints = typing.get_type_hints(Usage)
    out: list[Column[Any]] = []
    for name in names:
        hint = hints[name]  # KeyError: not a usage field
        args = typing.get_args(hint) if isinstance(hint, UnionType) else (hint,)
        (base,) = [a for a in args if a is not NoneType]
        out.append(Column(name, _SQL_TYPES[base], nullable=NoneType in args))
    return out


# Where the migrations put them: every field once per table, ``queue_s`` last (0006).
_USAGE_FIRST = tuple(name for name in USAGE_FIELDS if name != "queue_s")

metadata = MetaData()

runs = Table(
    "runs",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("suite_name", Text, nullable=False),
    Column("suite_hash", String(128), nullable=False),
    Column("status", String(32), nullable=False),
    Column("started_at", UTCDateTime(), nullable=False),
    Column("finished_at", UTCDateTime(), nullable=True),
    Column("metadata", JSONText(), nullable=False),
    Column("owner_pid", Integer, nullable=True),
    Column("owner_host", String(255), nullable=True),
    Column("heartbeat_at", UTCDateTime(), nullable=True),
    Index("ix_runs_suite_started", "suite_name", "started_at"),
)

responses = Table(
    "responses",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(64), ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("key", String(128), nullable=False),
    Column("candidate", Text, nullable=False),
    Column("role", Text, nullable=True),
    Column("scenario", Text, nullable=False),
    Column("input_id", Text, nullable=True),
    # NULL: no temperature was sent, the provider's default (migration 0007)
    Column("temperature", Float, nullable=True),
    Column("effective_temperature", Float, nullable=True),
    Column("run_index", Integer, nullable=False),
    Column("provider", Text, nullable=False),
    Column("model", Text, nullable=False),
    Column("text", Text, nullable=True),
    Column("finish_reason", String(64), nullable=True),
    *usage_columns(*_USAGE_FIRST),
    Column("prompt_versions", JSONText(), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("kind", String(32), nullable=False, server_default="candidate"),
    # true once a resumed run's current plan no longer asks for the row (migration 0005)
    Column("superseded", Boolean, nullable=False, server_default=false()),
    *usage_columns("queue_s"),
    # the call's cache key, shared across runs; NULL for rows before migration 0008
    Column("call_key", String(128), nullable=True),
    # the input row's hash (``input_rows.hash``); NULL: no row, or recorded before 0009
    Column("input_hash", String(64), nullable=True),
    # the replica that answered (a provider's base_urls); NULL otherwise (migration 0010)
    Column("served_by", Text, nullable=True),
    Index("ix_responses_run", "run_id"),
    # no index of input_hash, and call_key's holds the reference answers only: a random
    # key that every answer writes costs a large run most of its store time (0012)
)

input_rows = Table(
    "input_rows",
    metadata,
    Column("hash", String(64), primary_key=True),
    Column("row_json", Text, nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
)
"""Each input row's values once, by hash (migration 0009): ``row_json`` is the row's
values (secret-looking text masked) as compact JSON with sorted keys, ``hash`` its
SHA-256 in hex; responses name their row by ``responses.input_hash``."""

judgments = Table(
    "judgments",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(64), ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("response_key", String(128), nullable=False),
    Column("criterion", Text, nullable=False),
    Column("judge_key", String(128), nullable=False),
    Column("judge_model", Text, nullable=True),
    Column("threshold", Float, nullable=True),
    Column("score", Float, nullable=True),
    Column("passed", Boolean, nullable=True),
    Column("reasoning", Text, nullable=True),
    Column("unscored_reason", Text, nullable=True),
    Column("raw_text", Text, nullable=True),
    *usage_columns(*_USAGE_FIRST),
    Column("prompt_version", Integer, nullable=True),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("evaluator", Text, nullable=False, server_default="criteria"),
    Column("subject", JSONText(), nullable=True),
    Column("scores", JSONText(), nullable=True),
    Column("details", JSONText(), nullable=True),
    # sha256(criterion) in hex, written by the store: the unique key's stand-in for the
    # unbounded criterion text (see migration 0004)
    Column("criterion_hash", String(64), nullable=False),
    Column("superseded", Boolean, nullable=False, server_default=false()),
    *usage_columns("queue_s"),
    Index("ix_judgments_run", "run_id"),
)


def _current_only(table: Table) -> Any:
    """The predicate of the unique keys: they hold among current (not superseded) rows."""
    return table.c.superseded == false()


REFERENCE_KIND: ColumnElement[str] = literal_column("'reference'")
"""``responses.kind`` of a reference answer, as a literal: ``ix_responses_call_key`` holds
these rows only, and SQLite uses a partial index for a query that names its predicate's
value, not a bound parameter (``tests/store/test_store_answer_indexes.py`` checks the plans)."""


# the partial indexes: the unique keys, among current rows only (migration 0005), and the
# reference answers' call keys (0012). Their WHERE clause is given per dialect by
# ``use_dialect`` when a database is opened: naming both dialects here imported
# PostgreSQL's SQLAlchemy dialect into every SQLite process (20-40 ms) to check the
# ``postgresql_where`` argument.
_PARTIAL = (
    (
        Index("uq_responses_run_key_current", responses.c.run_id, responses.c.key, unique=True),
        _current_only(responses),
    ),
    (
        Index(
            "uq_judgments_run_evaluator_key_criterion_current",
            judgments.c.run_id,
            judgments.c.evaluator,
            judgments.c.response_key,
            judgments.c.criterion_hash,
            unique=True,
        ),
        _current_only(judgments),
    ),
    (Index("ix_responses_call_key", responses.c.call_key), responses.c.kind == REFERENCE_KIND),
)


def use_dialect(name: str) -> None:
    """Give the partial indexes their WHERE clause on dialect ``name`` (``sqlite``,
    ``postgresql``): called before a database of that dialect is used."""
    for index, where in _PARTIAL:
        options = index.dialect_options[name]
        if options["where"] is None:
            options["where"] = where


CURRENT_ONLY = {"responses": _current_only(responses), "judgments": _current_only(judgments)}
"""Per table: the predicate of its unique key's partial index (``INSERT .. ON CONFLICT``)."""

prompt_versions = Table(
    "prompt_versions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("content_hash", String(64), nullable=False),
    Column("text", Text, nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    UniqueConstraint("name", "version", name="uq_prompt_versions_name_version"),
    UniqueConstraint("name", "content_hash", name="uq_prompt_versions_name_hash"),
)

cache_entries = Table(
    "cache_entries",
    metadata,
    Column("key", String(128), primary_key=True),
    Column("kind", String(64), nullable=False),
    Column("provider", Text, nullable=False),
    Column("model", Text, nullable=False),
    Column("text", Text, nullable=True),
    Column("finish_reason", String(64), nullable=True),
    Column("input_tokens", Integer, nullable=True),
    Column("output_tokens", Integer, nullable=True),
    Column("effective_temperature", Float, nullable=True),
    Column("structured", JSONText(), nullable=True),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("expires_at", UTCDateTime(), nullable=True),
    Index("ix_cache_entries_kind", "kind"),
    Index("ix_cache_entries_expires_at", "expires_at"),
)

reference_reviews = Table(
    "reference_reviews",
    metadata,
    Column("call_key", String(128), primary_key=True),
    Column("ground_truth_status", String(32), nullable=False, server_default="unvalidated"),
    Column("human_validated_at", UTCDateTime(), nullable=True),
    Column("validation_notes", Text, nullable=True),
    Column("override_text", Text, nullable=True),
    # sha256 of the model's answer the status was given to (None: none was stored)
    Column("reviewed_answer_sha256", String(64), nullable=True),
    Column("updated_at", UTCDateTime(), nullable=False),
)
"""The review of a reference answer, by its call (cache) key (migration 0008); a
reference without a row is unvalidated."""

reference_audit = Table(
    "reference_audit",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("call_key", String(128), nullable=False),
    Column("who", Text, nullable=False),
    Column("at", UTCDateTime(), nullable=False),
    Column("action", String(32), nullable=False),
    Column("before", Text, nullable=True),
    Column("after", Text, nullable=True),
    Column("notes", Text, nullable=True),
    Index("ix_reference_audit_call_key", "call_key"),
)
"""Every review change, append-only: who, when, what, the value before and after, notes."""

labels = Table(
    "labels",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(64), ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("response_key", String(128), nullable=False),
    Column("criterion", Text, nullable=False),
    # sha256(criterion) in hex: the unique key's stand-in for the criterion (as judgments')
    Column("criterion_hash", String(64), nullable=False),
    # who labelled, as the file names them ('' when it does not)
    Column("labeller", String(255), nullable=False, server_default=""),
    Column("score", Float, nullable=True),
    Column("passed", Boolean, nullable=True),
    Column("notes", Text, nullable=True),
    Column("imported_by", Text, nullable=False),
    Column("imported_at", UTCDateTime(), nullable=False),
    Column("source_name", Text, nullable=False),
    Column("source_sha256", String(64), nullable=False),
    UniqueConstraint(
        "run_id",
        "response_key",
        "criterion_hash",
        "labeller",
        name="uq_labels_run_key_criterion_labeller",
    ),
)
"""People's labels of a run's answers (migration 0011): a score (0-10) and/or pass/fail
per (answer, criterion, labeller), with who imported them, when, and from which file
(its name and SHA-256)."""
