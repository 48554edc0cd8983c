"""Schema migrations, run programmatically (no alembic.ini on disk).

Every upgrade runs in one transaction that first takes a database-wide lock (SQLite:
``BEGIN IMMEDIATE``; PostgreSQL: an advisory transaction lock), so concurrent opens of
a fresh database migrate it exactly once.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from qualspec.errors import SchemaVersionError, StoreError

if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy.engine import Connection, Engine

    from qualspec.store._db import Database

__all__ = [
    "current_revision",
    "downgrade",
    "downgrade_engine",
    "ensure_schema",
    "open_schema",
    "file_revisions",
    "head_revision",
    "revisions",
    "upgrade",
    "upgrade_engine",
]

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
_ADVISORY_LOCK_ID = 0x71756C73  # "quls"


def _config(connection: Connection | None = None) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("path_separator", "os")
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


_SCRIPTS: list[Any] = []


def _script() -> Any:
    """The migration scripts, read once per process: alembic reads (executes) every
    revision file each time it builds one, and an open used to build it four times."""
    if not _SCRIPTS:
        from alembic.script import ScriptDirectory

        _SCRIPTS.append(ScriptDirectory.from_config(_config()))
    return _SCRIPTS[0]


def _run(connection: Connection, revision: str, *, down: bool) -> None:
    """``alembic upgrade/downgrade REVISION`` on ``connection``, with the scripts read once
    (what ``alembic.command.upgrade`` does, less building a new ``ScriptDirectory``)."""
    from alembic.runtime.environment import EnvironmentContext

    script = _script()

    def steps(rev: Any, _context: Any) -> Any:
        if down:
            return script._downgrade_revs(revision, rev)
        return script._upgrade_revs(revision, rev)

    with EnvironmentContext(_config(connection), script, fn=steps, destination_rev=revision):
        script.run_env()


def revisions() -> list[str]:
    """Every known schema revision, oldest first."""
    script = _script()
    return [str(rev.revision) for rev in reversed(list(script.walk_revisions()))]


def head_revision() -> str:
    """The newest schema revision this qualspec knows."""
    return str(_script().get_current_head())


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at (None for an empty database)."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        rev = MigrationContext.configure(conn).get_current_revision()
    return None if rev is None else str(rev)


def _locked_begin(engine: Engine) -> Any:
    """A write transaction holding the migration lock (context manager)."""
    from contextlib import contextmanager

    from sqlalchemy import text

    from qualspec.store._db import WRITE_OPTION

    @contextmanager
    def _cm() -> Any:
        with engine.execution_options(**{WRITE_OPTION: True}).begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": _ADVISORY_LOCK_ID})
            yield conn

    return _cm()


def upgrade_engine(engine: Engine, revision: str = "head") -> None:
    """Upgrade the database behind ``engine`` to ``revision``."""
    with _locked_begin(engine) as conn:
        _run(conn, revision, down=False)


def downgrade_engine(engine: Engine, revision: str) -> None:
    """Downgrade the database behind ``engine`` to ``revision``."""
    with _locked_begin(engine) as conn:
        _run(conn, revision, down=True)


def upgrade(url: str, revision: str = "head") -> None:
    """Upgrade the database at ``url`` to ``revision`` (default: the newest).

    ``Store.open`` does this by itself; this is for tools and tests.
    """
    from qualspec.store._db import Database

    db = Database(url)
    try:
        db.run_locked(lambda: upgrade_engine(db.engine, revision))
    finally:
        db.dispose()


def downgrade(url: str, revision: str) -> None:
    """Downgrade the database at ``url`` to ``revision`` (``"base"`` drops every table).

    For tests and repairs: data in dropped columns and tables is lost.
    """
    from qualspec.store._db import Database

    db = Database(url)
    try:
        db.run_locked(lambda: downgrade_engine(db.engine, revision))
    finally:
        db.dispose()


def file_revisions() -> list[str]:
    """Revision ids read from the migration file names (``NNNN_name.py``), oldest first.

    By convention each file's revision id is its number; a test checks this agrees with
    alembic. It lets ``ensure_schema`` skip importing alembic when nothing is to do.
    """
    names = (p.name.split("_", 1)[0] for p in (MIGRATIONS_DIR / "versions").glob("[0-9]*_*.py"))
    return sorted(names)


def _stamped_revision(engine: Engine) -> str | None:
    from sqlalchemy import text
    from sqlalchemy.exc import SQLAlchemyError

    try:
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT version_num FROM alembic_version")).all()
    except SQLAlchemyError:
        return None  # no version table yet: the slow path decides
    return str(rows[0][0]) if len(rows) == 1 else None


def _create_fresh(engine: Engine, head: str) -> bool:
    """Create an empty database's tables at ``head`` directly (no alembic import).

    The tables are the Core schema in ``_schema``, which the migration tests keep equal to
    what the migrations build. Returns False (and does nothing) when any table exists.
    """
    from sqlalchemy import inspect, text

    with _locked_begin(engine) as conn:
        if inspect(conn).get_table_names():
            return False
        for statement in _fresh_ddl(conn):  # what ``metadata.create_all`` runs
            conn.exec_driver_sql(statement)
        conn.execute(text("INSERT INTO alembic_version (version_num) VALUES (:v)"), {"v": head})
    return True


_FRESH_DDL: dict[tuple[str, Any], tuple[str, ...]] = {}


def _fresh_ddl(conn: Connection) -> tuple[str, ...]:
    """The statements creating every table and index at ``head`` (and the version table),
    compiled once per dialect and server version in this process: compiling them is most
    of the time a fresh database takes to open."""
    from sqlalchemy.schema import CreateIndex, CreateTable

    from qualspec.store._schema import metadata

    dialect = conn.dialect
    key = (dialect.name, dialect.server_version_info)
    cached = _FRESH_DDL.get(key)
    if cached is None:
        statements: list[str] = []
        for table in metadata.sorted_tables:  # parents before the tables naming them
            statements.append(str(CreateTable(table).compile(dialect=dialect)).strip())
            statements.extend(
                str(CreateIndex(index).compile(dialect=dialect)).strip()
                for index in sorted(table.indexes, key=lambda index: str(index.name))
            )
        statements.append(
            "CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL, "
            "CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num))"
        )
        cached = _FRESH_DDL[key] = tuple(statements)
    return cached


def ensure_schema(engine: Engine, display: str) -> None:
    """Bring the database to the newest schema; refuse one written by a newer qualspec.

    An empty database gets the newest tables at once; an older one is migrated.
    """
    known = file_revisions()
    if known and _stamped_revision(engine) == known[-1]:
        return
    if known and _create_fresh(engine, known[-1]):
        return
    head = head_revision()
    current = current_revision(engine)
    if current == head:
        return
    if current is not None and current not in revisions():
        raise SchemaVersionError(
            f"the database {display} is at schema revision {current}, newer than this "
            f"qualspec knows (head {head}): upgrade qualspec (pip install -U qualspec)"
        )
    upgrade_engine(engine)


def open_schema(db: Database) -> None:
    """``ensure_schema`` on a Store's database, which is closed on any error; an error of
    the database says what to check."""
    try:
        db.run_locked(lambda: ensure_schema(db.engine, db.display))
    except SchemaVersionError:
        db.dispose()
        raise
    except StoreError as exc:
        db.dispose()
        raise StoreError(
            f"cannot open the results database: {exc}; check that it is reachable "
            "and the URL is right (--db or QUALSPEC_DATABASE_URL)"
        ) from exc
    except BaseException:
        db.dispose()
        raise
